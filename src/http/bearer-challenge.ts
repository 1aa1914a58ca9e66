/** An RFC 6750 §3 challenge; `scope` names what an insufficient_scope refusal lacked. */
export function bearerChallenge(error: string, description: string, scope?: string): string {
  const scopePart = scope === undefined ? '' : `, scope="${scope}"`
  return `Bearer realm="medpanel", error="${error}"${scopePart}, error_description="${description.replace(/["\\]/g, '')}"`
}
