/**
 * The Node.js version check the `rampart` bin runs before it loads the CLI.
 *
 * better-sqlite3 13 is built for Node.js >= 22.12; an older Node.js loads its binary and dies
 * with a segmentation fault (exit 139) and no message, which tells a user nothing. The bin
 * therefore asks this module first and loads the CLI only when it answers null.
 *
 * This module is imported by the bin on whatever Node.js is first on PATH, so it must import
 * nothing and its compiled JavaScript must parse on old versions: no `??`, no `?.`, no
 * top-level await (Node.js 12.17, the first with ES modules unflagged, must get the message).
 */

/** The oldest Node.js the package supports; `engines` in package.json says the same. */
export const MINIMUM_NODE = { major: 22, minor: 12 } as const;

/**
 * The exit code after the message: EX_CONFIG of sysexits(3), the environment is not set up to
 * run the command. Listed in `EXIT` (cli-error.ts) with the others; defined here so the bin
 * needs this module only.
 */
export const UNSUPPORTED_NODE_EXIT = 78;

/** `MINIMUM_NODE` as users read it: "22.12". */
export const MINIMUM_NODE_TEXT = `${MINIMUM_NODE.major}.${MINIMUM_NODE.minor}`;

/**
 * Null when Node.js `version` (`process.versions.node`, "20.20.2"; a leading "v" is accepted)
 * can run the CLI, else the message to print on stderr before exiting with
 * `UNSUPPORTED_NODE_EXIT`: what is wrong and what to run instead.
 *
 * A version string that does not start with "MAJOR.MINOR" answers null: the check exists to
 * replace a crash with advice, and refusing a version it cannot read would risk refusing a
 * Node.js that works.
 */
export function unsupportedNodeMessage(version: string): string | null {
  const parsed = /^v?(\d+)\.(\d+)/.exec(version);
  if (parsed === null) return null;
  const major = Number(parsed[1]);
  const minor = Number(parsed[2]);
  const supported =
    major > MINIMUM_NODE.major || (major === MINIMUM_NODE.major && minor >= MINIMUM_NODE.minor);
  if (supported) return null;
  return [
    `rampart: Node.js ${version.replace(/^v/, '')} is too old: rampart needs Node.js >= ${MINIMUM_NODE_TEXT}`,
    '(its SQLite binding, better-sqlite3, crashes on older versions), so nothing was run.',
    'In a Rampart checkout, run it from the repository root with',
    '  npm run rampart -- ARGUMENTS...',
    'which installs Node.js 24 into .tools/node when needed (scripts/bootstrap.sh) and runs it there.',
    `Anywhere else, put Node.js >= ${MINIMUM_NODE_TEXT} first on PATH.`,
    '',
  ].join('\n');
}
