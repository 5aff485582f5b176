/**
 * Random turns for property tests: 1-4 streamed items (messages and reasoning) whose
 * events interleave arbitrarily, with a random gradient.
 */
import type { StreamEvent } from "@sluice/core"
import * as FastCheck from "fast-check"
import * as Gradient from "../src/Gradient.js"
import { delta, itemStart, messageDone, reasoningDone, responseDone, responseStart } from "./fixtures.js"

/** A streamed item of a generated turn. */
export interface ItemPlan {
  readonly id: string
  readonly type: "message" | "reasoning"
  readonly deltas: ReadonlyArray<string>
}

/** A generated turn: its items, its events in order, a gradient. */
export interface TurnPlan {
  readonly items: ReadonlyArray<ItemPlan>
  readonly events: ReadonlyArray<StreamEvent.StreamEvent>
  readonly gradient: ReadonlyArray<number>
}

const text = FastCheck.oneof(
  FastCheck.string({ maxLength: 12 }),
  FastCheck.string({ minLength: 20, maxLength: 400 }),
  FastCheck.constant("")
)

const itemArb = (index: number): FastCheck.Arbitrary<ItemPlan> =>
  FastCheck.record({
    id: FastCheck.constant(`item_${index}`),
    type: FastCheck.constantFrom("message" as const, "reasoning" as const),
    deltas: FastCheck.array(text, { maxLength: 60 })
  })

export const itemEvents = (item: ItemPlan): Array<StreamEvent.StreamEvent> => [
  itemStart(item.id, item.type),
  ...item.deltas.map((d) => delta(item.id, d)),
  item.type === "message"
    ? messageDone(item.id, item.deltas.join(""))
    : reasoningDone(item.id, item.deltas.join(""))
]

/** A turn of 1-4 streamed items whose events interleave arbitrarily. */
export const turnArb: FastCheck.Arbitrary<TurnPlan> = FastCheck.integer({ min: 1, max: 4 })
  .chain((n) => FastCheck.tuple(...Array.from({ length: n }, (_, i) => itemArb(i))))
  .chain((items) => {
    const lanes = items.map(itemEvents)
    const slots = lanes.flatMap((lane, i) => lane.map(() => i))
    return FastCheck.record({
      order: FastCheck.shuffledSubarray(slots, { minLength: slots.length, maxLength: slots.length }),
      gradient: FastCheck.oneof(
        FastCheck.constant(Gradient.defaultSteps),
        FastCheck.array(FastCheck.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 })
      )
    }).map(({ gradient, order }) => {
      const cursors = lanes.map(() => 0)
      const events = order.map((lane) => lanes[lane]![cursors[lane]!++]!)
      return { items, gradient, events: [responseStart(), ...events, responseDone()] }
    })
  })
