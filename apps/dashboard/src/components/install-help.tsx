/** How to protect an app with a site's key: what a new site shows instead of an empty page. */
export function InstallHelp({ siteId, siteKey }: { siteId: string; siteKey?: string }) {
  const hub = window.location.origin;
  const key = siteKey ?? `rk_… (site ${siteId}: rotate a key under Keys to get one)`;
  return (
    <div class="install">
      <p>Install the client in your app and give it this site's key:</p>
      <pre>
        <code>{`npm install @rampart/waf-client

import { createRampart } from '@rampart/waf-client/rampart';

// RAMPART_SITE_KEY=${key}
const rampart = createRampart({ hubUrl: '${hub}', siteKey: process.env.RAMPART_SITE_KEY });
app.use(rampart.middleware); // Express, Connect or node:http`}</code>
      </pre>
      <p>Its reports show up here within seconds of the first request.</p>
    </div>
  );
}
