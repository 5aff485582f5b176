/** fast-check arbitraries shared by the normalizer property tests. */
import * as FastCheck from "fast-check"
import type { Edit } from "./normalizerHarness.js"

/** Cut points of a body into reads. */
export const cuts = FastCheck.array(FastCheck.nat(), { maxLength: 40 })

/** A few random byte edits. */
export const edits: FastCheck.Arbitrary<ReadonlyArray<Edit>> = FastCheck.array(
  FastCheck.tuple(
    FastCheck.constantFrom("flip" as const, "delete" as const, "insert" as const),
    FastCheck.nat(),
    FastCheck.nat({ max: 255 })
  ),
  { minLength: 1, maxLength: 6 }
)
