/**
 * Message text as markdown: parsed by `marked`, then sanitized by DOMPurify into a DOM
 * fragment (never assigned as markup to the page). Scripts, event handler attributes,
 * styles, images, forms and frames go; links keep only `http(s)` addresses and open in a new
 * tab without a referrer. The page's CSP (`script-src 'self'`, `img-src 'self'`) is a
 * second wall behind this one.
 */
import DOMPurify, { type Config } from "dompurify"
import { Marked } from "marked"

const parser = new Marked({ gfm: true, breaks: true, async: false })

const purifier = DOMPurify(window)
purifier.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("rel", "noopener noreferrer nofollow")
    node.setAttribute("target", "_blank")
  }
})

const options: Config & { RETURN_DOM_FRAGMENT: true } = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    "style",
    "form",
    "input",
    "button",
    "textarea",
    "select",
    "iframe",
    "object",
    "embed",
    "svg",
    "math",
    "img"
  ],
  FORBID_ATTR: ["style", "class", "id"],
  ALLOWED_URI_REGEXP: /^https?:\/\//i,
  RETURN_DOM_FRAGMENT: true
}

/** Markdown as a sanitized fragment, ready to append. */
export const renderMarkdown = (text: string): DocumentFragment => {
  const html = parser.parse(text)
  return purifier.sanitize(typeof html === "string" ? html : "", options)
}
