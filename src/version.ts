import pjson from '../package.json' with {type: 'json'}

/** This release's version, from package.json (bundled, so the executable carries it too). */
export const MEDPANEL_VERSION: string = pjson.version
