/**
 * Clocks for tests: the sleeps pending on a TestClock (`withSleeps`, `sleeps`,
 * `untilSleeping`), and a manual clock whose timers fire only when the test fires them.
 *
 * @since 0.3.0
 */
export * from "./clock/manual.js"
export * from "./clock/sleeps.js"
