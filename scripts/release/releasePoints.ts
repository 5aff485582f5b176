/**
 * Sluice's release points before its first publication: the one place they are written
 * down. `pnpm release:check` reads them (a changelog's entry for one of them must name its
 * commit), and `docs/releasing.md` and the packages' `CHANGELOG.md` files cite them.
 *
 * Neither was published to npm and the repository has no tag for either: each is reached
 * by its commit id (`git checkout <commit>` in a clone of the repository). From 0.3.0 on,
 * a version is what `changeset publish` publishes and tags (`@sluice/core@0.3.0`).
 */

/** A version of the `@sluice/*` packages that exists only as a commit. */
export interface ReleasePoint {
  /** The version every `@sluice/*` package had at that commit. */
  readonly version: string
  /** The full id of the commit that holds its source. */
  readonly commit: string
  /** The `effect` line the packages ran on. */
  readonly effect: string
  /** What the point is, in a few words. */
  readonly summary: string
}

/** The Effect 3 line: the last commit before the port to Effect 4. */
export const effect3: ReleasePoint = {
  version: "0.1.0",
  commit: "83f37833cdc7549e60367f6cf9b2886d0b1064fa",
  effect: "3.x",
  summary: "the Effect 3 line"
}

/** The same packages ported to Effect 4 (effect 4.1). */
export const effect4Port: ReleasePoint = {
  version: "0.2.0",
  commit: "1349da74d26d95f542d761ff3855f1e1e4ec030c",
  effect: "4.1",
  summary: "the port to Effect 4"
}

/** Every release point that exists only as a commit, oldest first. */
export const releasePoints: ReadonlyArray<ReleasePoint> = [effect3, effect4Port]

/** The short form of a commit id that changelogs and docs cite (git's default, 7 digits). */
export const shortCommit = (commit: string): string => commit.slice(0, 7)
