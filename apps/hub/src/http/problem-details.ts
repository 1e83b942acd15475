/**
 * The one error format of the hub's API: RFC 9457 problem details, served as
 * `application/problem+json`.
 *
 * ```json
 * { "type": "about:blank", "title": "Unprocessable Entity", "status": 422,
 *   "detail": "rules[0] (id \"geo\"): countries[0]: must be an ISO 3166-1 alpha-2 code such as \"DE\"",
 *   "instance": "/v1/sites/shop/rules",
 *   "issues": [{ "field": "countries[0]", "reason": "must be ...", "index": 0, "ruleId": "geo" }] }
 * ```
 *
 * `type` is `about:blank` (the status says it all), `title` the status phrase, `detail` one
 * human-readable sentence, `instance` the request path (never its query, which may hold a
 * credential). `issues` (an extension member) lists each field-level problem: `field` names the
 * field (`name`, `events[3].time`, a rule's `when[1].value`), `reason` says what is wrong, and
 * members of the validator that found it may follow (a rule's `index` and `ruleId`, a dataset
 * line's `file` and `line`).
 *
 * Controllers throw Nest's `HttpException`s as usual; `ProblemDetailsFilter` turns every error
 * into this shape, and `ApiProblems` declares it in the OpenAPI document.
 */
import { applyDecorators, UnprocessableEntityException } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';

export const PROBLEM_JSON = 'application/problem+json';

/** One field-level problem. */
export interface ProblemIssue {
  readonly field: string;
  readonly reason: string;
  readonly [extension: string]: unknown;
}

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance?: string;
  readonly issues?: readonly ProblemIssue[];
  readonly [extension: string]: unknown;
}

export class ProblemIssueSchema implements ProblemIssue {
  readonly [extension: string]: unknown;

  @ApiProperty({ description: 'The field, as a path into the request: `name`, `events[3].time`.' })
  field!: string;

  @ApiProperty({ description: 'What is wrong with it.' })
  reason!: string;
}

/** The OpenAPI schema of every error body (component `ProblemDetails`). */
export class ProblemDetails implements Problem {
  readonly [extension: string]: unknown;

  @ApiProperty({ description: 'A URI naming the problem type; `about:blank`: see `status`.' })
  type!: string;

  @ApiProperty({ description: 'The HTTP status phrase.', example: 'Not Found' })
  title!: string;

  @ApiProperty({
    description: 'The HTTP status code.',
    minimum: 400,
    maximum: 599,
    type: 'integer',
  })
  status!: number;

  @ApiProperty({ description: 'What went wrong, for people.' })
  detail!: string;

  @ApiPropertyOptional({ description: 'The request path the problem occurred on.' })
  instance?: string;

  @ApiPropertyOptional({
    type: [ProblemIssueSchema],
    description:
      'Every field-level problem; validators may add members (a rule index and id, a file line).',
  })
  issues?: ProblemIssue[];
}

/** Statuses the hub answers with a problem, with what each usually means. */
const DEFAULT_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is malformed (`issues` names each field).',
  401: 'Missing or invalid credentials.',
  404: 'The resource does not exist.',
  405: 'The path exists, not with this method (`Allow` lists those it has).',
  409: 'The change conflicts with the current state.',
  413: 'The body is larger than the limit.',
  415: 'The body is not in a media type this endpoint reads.',
  422: 'The request is well-formed but its content is refused (`issues` names each problem).',
  429: 'Too many requests: retry after `Retry-After`.',
  500: 'An unexpected error (logged by the hub).',
  503: 'The hub cannot take this now: retry after `Retry-After`.',
};

/**
 * 422 for a document refused field by field: `detail` is the first issue (`field: reason`) and
 * how many more there are, `issues` lists every one (the exception filter makes it a problem).
 */
export function invalidFields(
  issues: readonly { readonly field: string; readonly reason: string }[],
): UnprocessableEntityException {
  const [first] = issues;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new UnprocessableEntityException({
    statusCode: 422,
    error: 'Unprocessable Entity',
    message: `${first?.field}: ${first?.reason}${more}`,
    issues,
  });
}

/** Statuses every JSON body may get before a handler sees it (body parser, media type). */
export const JSON_BODY_PROBLEMS = {
  400: 'The body is not valid JSON, or does not match the schema (`issues` names each field).',
  413: 'The body is larger than `HUB_MAX_JSON_BYTES`.',
  415: 'The body is not `application/json`, or its `Content-Encoding` is unsupported.',
} as const;

/**
 * Declares problem-details answers: `@ApiProblems(404, 409)` with the default descriptions, or
 * `@ApiProblems({ 404: 'No such site.' })`. On a controller it applies to every route; a route's
 * own declaration of a status wins.
 */
export function ApiProblems(
  ...statuses: (number | Readonly<Record<number, string>>)[]
): MethodDecorator & ClassDecorator {
  const described = new Map<number, string>();
  for (const entry of statuses) {
    if (typeof entry === 'number') described.set(entry, DEFAULT_DESCRIPTIONS[entry] ?? '');
    else for (const [status, text] of Object.entries(entry)) described.set(Number(status), text);
  }
  return applyDecorators(
    ApiExtraModels(ProblemDetails),
    ...[...described].map(([status, description]) =>
      ApiResponse({
        status,
        description,
        content: { [PROBLEM_JSON]: { schema: { $ref: getSchemaPath(ProblemDetails) } } },
        ...(PROBLEM_HEADERS[status] ? { headers: PROBLEM_HEADERS[status] } : {}),
      }),
    ),
  );
}

const STRING = { type: 'string' } as const;

/** Headers that come with some problems. */
const PROBLEM_HEADERS: Record<
  number,
  Record<string, { schema: typeof STRING; required?: boolean; description: string }>
> = {
  401: {
    'WWW-Authenticate': { schema: STRING, required: true, description: 'The scheme: `Bearer`.' },
  },
  405: { Allow: { schema: STRING, required: true, description: 'The methods of the path.' } },
  429: { 'Retry-After': { schema: STRING, description: 'Seconds to wait.' } },
  503: { 'Retry-After': { schema: STRING, description: 'Seconds to wait.' } },
};
