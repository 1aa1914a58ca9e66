/** Types of tree-check.mjs (plain JavaScript, so that scripts/test.mjs can run it without a loader). */
export type TreeSnapshot = Map<string, string>
export function parseStatus(text: string): Map<string, string>
export function isStrayStore(path: string): boolean
export function snapshotTree(root: string): TreeSnapshot | undefined
export function treeChanges(before: TreeSnapshot, after: TreeSnapshot): string[]
