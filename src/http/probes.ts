/**
 * The paths a load balancer, an orchestrator or a start script polls: /livez (the process runs),
 * /readyz (it may be sent traffic) and /healthz (the same answer as /readyz, its older name). They
 * name no address of the service and read no secret, so they answer whatever the Host (a probe
 * by IP address) and while the service is still starting.
 */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/livez', '/readyz', '/healthz'])
