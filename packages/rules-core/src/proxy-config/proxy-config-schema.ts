/**
 * The JSON Schema (draft 2020-12, as OpenAPI 3.1 reads it) of a prexy configuration document,
 * from the same limits and defaults `parseProxyConfig` applies, so the hub's API document
 * describes exactly the bodies it accepts. `proxy-config-schema.test.ts` holds the two to each
 * other.
 *
 * What JSON Schema cannot state, the parser still checks: that each rule's pattern compiles (and
 * the set's automaton fits) and its replacement template is well formed, that hosts and path prefixes are unique, and the port range of a
 * host. The hub's API declares those refusals as 422.
 */
import {
  DEFAULT_CONTENT_TYPES,
  DEFAULT_PROXY_MAX_BUFFERED_BYTES,
  MAX_LENGTH,
  MAX_PROXY_BUFFERED_BYTES,
  MAX_ROUTES,
  MAX_RULE_SETS,
  MAX_RULES_PER_SET,
} from './proxy-config.js';

type JsonSchema = Readonly<Record<string, unknown>>;

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_PATTERN = `^${LABEL}(?:\\.${LABEL})*(?::[0-9]{1,5})?$`;
const TOKEN = '[A-Za-z0-9!#$&^_.+-]+';
const MEDIA_TYPE_PATTERN = `^(?:\\*|${TOKEN}/(?:\\*|${TOKEN}))$`;
/** http(s), a host, an optional port, nothing else (the parser also takes one trailing `/`). */
const ORIGIN_PATTERN = '^https?://[A-Za-z0-9.-]+(?::[1-9][0-9]{0,4})?/?$';

/**
 * The schema of the whole document; `normalised` describes what the hub answers (every field
 * present, as the parser fills in defaults) rather than what it accepts.
 */
export function proxyConfigSchema(normalised = false): JsonSchema {
  const required = (fields: readonly string[], always: readonly string[]) =>
    normalised ? fields : always;
  const route: JsonSchema = {
    type: 'object',
    additionalProperties: false,
    required: required(
      ['host', 'upstream', 'contentTypes', 'maxBufferedBytes', 'keepLastModified', 'preserveHost'],
      ['host', 'upstream'],
    ),
    properties: {
      host: {
        type: 'string',
        pattern: HOST_PATTERN,
        maxLength: MAX_LENGTH.host,
        description:
          'The incoming Host this route answers, with :port when the listener is not on 80/443 (unique across the site).',
      },
      upstream: {
        type: 'string',
        pattern: ORIGIN_PATTERN,
        maxLength: MAX_LENGTH.upstream,
        description:
          'The origin requests go to (http:// or https://, no path: requests keep their own).',
      },
      contentTypes: {
        type: 'array',
        maxItems: 100,
        items: { type: 'string', pattern: MEDIA_TYPE_PATTERN, maxLength: MAX_LENGTH.contentType },
        default: DEFAULT_CONTENT_TYPES,
        description: 'Media types whose bodies are substituted; "*" for any.',
      },
      maxBufferedBytes: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_PROXY_BUFFERED_BYTES,
        default: DEFAULT_PROXY_MAX_BUFFERED_BYTES,
        description:
          'Longest partial match held back; past it the body streams on unsubstituted from there (SUBSTITUTION-SPEC 13).',
      },
      keepLastModified: {
        type: 'boolean',
        default: false,
        description: "Keep the upstream's Last-Modified on substituted responses.",
      },
      preserveHost: {
        type: 'boolean',
        default: false,
        description: "Send the client's Host upstream instead of the upstream's own.",
      },
    },
  };
  const rule: JsonSchema = {
    type: 'object',
    additionalProperties: false,
    required: required(['pattern', 'replacement', 'flags'], ['pattern', 'replacement']),
    properties: {
      pattern: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_LENGTH.pattern,
        description:
          'A regular expression of the linear-time engine (SUBSTITUTION-SPEC); one that does not compile is refused with 422 naming its position and construct.',
      },
      replacement: {
        type: 'string',
        maxLength: MAX_LENGTH.replacement,
        description:
          'The replacement template: $& (or {&} after $) is the match, $1..$N groups, $$ a literal dollar (SUBSTITUTION-SPEC 11).',
      },
      flags: {
        type: 'string',
        enum: ['', 'g', 'i', 'gi', 'ig'],
        default: '',
        description: 'g: every match, not only the first; i: case-insensitive.',
      },
    },
  };
  const ruleSet: JsonSchema = {
    type: 'object',
    additionalProperties: false,
    required: required(['pathPrefix', 'matchKind', 'rules'], ['pathPrefix']),
    properties: {
      pathPrefix: {
        type: 'string',
        pattern: '^/[^?#\\s]*$',
        maxLength: MAX_LENGTH.pathPrefix,
        description:
          'Paths starting with this use these rules; the longest prefix wins and replaces its parents (no merging). "/" is site-wide.',
      },
      matchKind: {
        type: 'string',
        enum: ['leftmost-first', 'leftmost-longest'],
        default: 'leftmost-first',
      },
      rules: { type: 'array', maxItems: MAX_RULES_PER_SET, items: rule },
    },
  };
  return {
    type: 'object',
    additionalProperties: false,
    required: required(['routes', 'ruleSets', 'edgeWaf'], []),
    properties: {
      routes: { type: 'array', maxItems: MAX_ROUTES, items: route },
      ruleSets: { type: 'array', maxItems: MAX_RULE_SETS, items: ruleSet },
      edgeWaf: {
        type: 'boolean',
        default: false,
        description:
          "Evaluate the site's WAF rules at prexy, before the upstream is contacted (403/429 answered at the edge).",
      },
    },
  };
}
