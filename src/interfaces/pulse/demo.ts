import {DEMO_CLIENT_SECRET, type DemoPart} from '../../demo-data.js'
import * as repo from './repository.js'
import {seedPulses} from './seed.js'

/** Seven pulses cover every pulse status; the three fielded ones carry respondents of every survey status. */
const DEMO_PULSES = 7
const DEMO_RESPONDENTS = 150

/** Interface D's slice of the demo: seeded pulses owned by the demo client, and how to export one. */
export const pulseDemo: DemoPart = {
  name: 'pulses',
  async seed(db, {baseUrl, now, clientId}) {
    await seedPulses(db, {clientId, count: DEMO_PULSES, respondents: DEMO_RESPONDENTS, seed: 'demo'}, now)
    const pulses = await repo.listPulses(db, clientId)
    const fielded = pulses.find((p) => p.status === 'Launched') ?? pulses[0]
    const auth = '-H "Authorization: Bearer $TOKEN"'
    return {
      info: {pulses: pulses.map((p) => ({project_id: p.id, title: p.title, status: p.status, respondents: Number(p.respondents ?? 0)}))},
      lines: [
        `${pulses.length} pulses owned by ${clientId}; get a client_credentials token, then list and export:`,
        `TOKEN=$(curl -s -X POST ${baseUrl}/oauth/token -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${DEMO_CLIENT_SECRET} | jq -r .access_token)`,
        `curl -s ${baseUrl}/clients/info ${auth}`,
        `curl -s ${baseUrl}/clients/projectsInfo ${auth}`,
        ...(fielded ? [`curl -s ${baseUrl}/projects/${fielded.id}/export ${auth} -o pulse.json`] : []),
      ],
    }
  },
}
