/**
 * Identifier helpers shared by every stage.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"

/**
 * A fresh random UUID (v4) for an event or emission.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generateEventId = (): string => randomUUID()

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Whether a string is a UUID in its canonical 8-4-4-4-12 hex form.
 *
 * @since 0.1.0
 * @category guards
 */
export const isUuid = (value: string): boolean => uuidPattern.test(value)
