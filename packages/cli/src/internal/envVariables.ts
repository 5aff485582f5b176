/**
 * The environment variable each option of `EnvOptions` falls back to, kept by the
 * option itself, so that a usage error can name it (`missing --model (or set
 * SLUICE_MODEL)`).
 *
 * @internal
 */

const variables = new WeakMap<object, string>()

/** `flag`, known to fall back to the variable `env`. */
export const register = <F extends object>(flag: F, env: string): F => {
  variables.set(flag, env)
  return flag
}

/** The variable `flag` falls back to, if it is one of `EnvOptions`. */
export const variableOf = (flag: object): string | undefined => variables.get(flag)

/** A variable a command reads beyond its options' own, as its help lists it. */
export interface Variable {
  readonly usage: string
  readonly text: string
}

/** The provider keys and base URLs a turn's request reads (`sluice run`, `POST /v1/turns`). */
export const providerVariables: ReadonlyArray<Variable> = [
  {
    usage: "OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY",
    text:
      "the provider's API key (openai-chat, openai-responses and openai-compatible use OPENAI_API_KEY); several as a comma-separated list, rotated in order"
  },
  {
    usage: "OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GEMINI_BASE_URL",
    text: "the provider's base URL, as its SDK takes it (default: the provider's own)"
  }
]

/** What each command reads from the environment beyond its options, by the command's name. */
export const commandVariables: ReadonlyMap<string, ReadonlyArray<Variable>> = new Map([
  ["run", providerVariables],
  [
    "serve",
    [
      {
        usage: "SLUICE_API_TOKENS",
        text:
          "the bearer tokens the API accepts, comma-separated; required: without one the server does not start (unless --insecure-local)"
      },
      ...providerVariables.map((variable) => ({ ...variable, text: `${variable.text}; read by POST /v1/turns` }))
    ]
  ]
])
