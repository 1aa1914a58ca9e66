import {GRANTS, type GrantFlow} from './flows/index.js'

/**
 * The token endpoint's grants by grant_type (flows/index.ts lists them): the route looks the
 * request up here, and discovery lists the keys (grant_types_supported).
 */
export const GRANT_FLOWS: ReadonlyMap<string, GrantFlow> = new Map(GRANTS.map((flow) => [flow.grantType, flow]))

/**
 * What an issued token is counted under (signon_tokens_issued_total): each grant. `operator` (the
 * issue-token command) is kept at 0: the command runs in a process of its own, which no /metrics
 * shows, so the service never counts it; the series stays for the dashboards written against it.
 */
export const ISSUED_BY: readonly string[] = [...GRANT_FLOWS.keys(), 'operator']
