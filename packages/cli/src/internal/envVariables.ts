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
