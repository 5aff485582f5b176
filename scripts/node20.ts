/**
 * What Vitest 5's runner uses of Node 22 and Node 20 lacks: `Object.groupBy`,
 * `Map.groupBy` (its reporter groups a failed test's attempts with it, so without it
 * every failure's details are lost to a "Map.groupBy is not a function") and
 * `Promise.withResolvers`. Defined here only where missing, before Vitest's own code runs
 * (`vitest.config.ts` imports this first). Sluice's packages need none of them.
 */

const define = (target: object, name: string, value: unknown) => {
  if (!Reflect.has(target, name)) Object.defineProperty(target, name, { value, writable: true, configurable: true })
}

const groupInto = <K, V>(items: Iterable<V>, key: (item: V, index: number) => K, add: (key: K, item: V) => void) => {
  let index = 0
  for (const item of items) add(key(item, index++), item)
}

define(Object, "groupBy", <V>(items: Iterable<V>, key: (item: V, index: number) => PropertyKey) => {
  const groups: Record<PropertyKey, Array<V>> = Object.create(null)
  groupInto(items, key, (name, item) => (groups[name] ??= []).push(item))
  return groups
})

define(Map, "groupBy", <K, V>(items: Iterable<V>, key: (item: V, index: number) => K) => {
  const groups = new Map<K, Array<V>>()
  groupInto(items, key, (name, item) => {
    const group = groups.get(name)
    if (group === undefined) groups.set(name, [item])
    else group.push(item)
  })
  return groups
})

define(Promise, "withResolvers", <A>() => {
  let resolve: (value: A | PromiseLike<A>) => void = () => undefined
  let reject: (reason?: unknown) => void = () => undefined
  const promise = new Promise<A>((ok, fail) => {
    resolve = ok
    reject = fail
  })
  return { promise, resolve, reject }
})

export {}
