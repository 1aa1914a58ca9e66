// Generates data/iso/countries.json (ISO 3166-1) and data/iso/regions.json (ISO 3166-2) from
// Debian's iso-codes package. Run once after `apt-get install iso-codes`; the output is committed,
// so the service needs nothing from the system at run time.
//   node scripts/gen-iso.mjs [--source /usr/share/iso-codes/json]
import {mkdir, readFile, writeFile} from 'node:fs/promises'

const sourceFlag = process.argv.indexOf('--source')
const source = sourceFlag > 0 ? process.argv[sourceFlag + 1] : '/usr/share/iso-codes/json'
const out = new URL('../data/iso/', import.meta.url)

async function load(name, key) {
  try {
    return JSON.parse(await readFile(`${source}/${name}`, 'utf8'))[key]
  } catch (error) {
    console.error(`cannot read ${source}/${name}: ${error.message} (apt-get install iso-codes)`)
    process.exit(1)
  }
}

const byCode = (a, b) => (a < b ? -1 : a > b ? 1 : 0)

const countries = (await load('iso_3166-1.json', '3166-1')).map((c) => ({alpha_2_code: c.alpha_2, short_name: c.name})).sort((a, b) => byCode(a.alpha_2_code, b.alpha_2_code))
const known = new Set(countries.map((c) => c.alpha_2_code))

const regions = {}
for (const r of await load('iso_3166-2.json', '3166-2')) {
  const [country, local] = r.code.split('-')
  if (!known.has(country) || !local) throw new Error(`unexpected subdivision code ${r.code}`)
  regions[country] ??= []
  regions[country].push({region_code: r.code, name: r.name, alpha_2_code: country, postal_abbreviation: local})
}
const sortedRegions = {}
for (const code of Object.keys(regions).sort(byCode)) sortedRegions[code] = regions[code].sort((a, b) => byCode(a.region_code, b.region_code))

// One record per line: small diffs when iso-codes is updated, still plain JSON.
const lines = (items) => items.map((item) => JSON.stringify(item))
const countriesText = `[\n${lines(countries)
  .map((l) => `  ${l}`)
  .join(',\n')}\n]\n`
const regionsText = `{\n${Object.entries(sortedRegions)
  .map(
    ([code, items]) =>
      `  ${JSON.stringify(code)}: [\n${lines(items)
        .map((l) => `    ${l}`)
        .join(',\n')}\n  ]`,
  )
  .join(',\n')}\n}\n`

await mkdir(out, {recursive: true})
await writeFile(new URL('countries.json', out), countriesText)
await writeFile(new URL('regions.json', out), regionsText)
const regionCount = Object.values(sortedRegions).reduce((n, items) => n + items.length, 0)
console.error(`wrote ${countries.length} countries and ${regionCount} regions of ${Object.keys(sortedRegions).length} countries to data/iso/`)
