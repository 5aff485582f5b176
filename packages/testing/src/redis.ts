/**
 * Redis for tests: a throwaway `redis-server` and Redis Cluster on loopback, a proxy
 * that cuts connections mid-write, and a `RedisStreams` that injects write faults. The
 * global setup that hands every test one server is `@sluice/testing/redis/globalSetup`.
 *
 * @since 0.3.0
 */
export * from "./redis/CuttingProxy.js"
export * from "./redis/faulty.js"
export * from "./redis/redisAdmin.js"
export * from "./redis/redisCluster.js"
export * from "./redis/RedisServer.js"
