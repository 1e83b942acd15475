/**
 * Entry point: `node dist/main.js` (production) or `npm run dev` (watch mode, next to the hub).
 * What the process does is in `server.ts`.
 */
import { runDemoOrExit } from './server.js';

runDemoOrExit();
