// A WAF client in its own process, for the "killed during download" test: it syncs from the
// hub given on the command line into the data directory given, and waits to be killed.
// Imports the built package (dist), as an app would.
import { createRampart } from '@rampart/waf-client/rampart';

const [hubUrl, siteKey, dataDir] = process.argv.slice(2);
const rampart = createRampart({ hubUrl, siteKey, dataDir, env: {}, syncIntervalMs: 60_000 });
setInterval(() => {}, 1000);
await rampart.ready();
