declare module "cluster-key-slot" {
  /** The Redis Cluster slot (0-16383) of a key, its `{hash tag}` honoured. */
  const calculateSlot: (key: string | Buffer) => number
  export default calculateSlot
}
