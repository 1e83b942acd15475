/**
 * Turns every error of an HTTP request into an RFC 9457 problem (`problem-details.ts`), once for
 * the whole API:
 * - `HttpException`s thrown by guards, pipes and handlers: their status, their message as
 *   `detail`, and any other members of their body (`issues`, `issueCount`) as extensions.
 *   class-validator's refusals arrive with `issues` already (see `validation.ts`).
 * - Body-parser errors (Nest maps them to `HttpException`s, the original as `cause`): 400 for
 *   malformed JSON, 413 past the size limit, 415 for an unsupported encoding or charset.
 * - A path that exists with other methods: 405 with `Allow` (OPTIONS: 204 with `Allow`); a path
 *   that does not exist: 404.
 * - Anything else: 500 saying only that it happened; the error and its stack go to the log.
 *
 * Headers set before the error stay (`Retry-After`, `X-Rampart-Protocol`, `WWW-Authenticate`);
 * those describing a body that is not sent any more go, and no problem is cacheable.
 */
import { STATUS_CODES } from 'node:http';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AllowedMethods } from './allowed-methods.js';
import { PROBLEM_JSON, type Problem, type ProblemIssue } from './problem-details.js';

/** Headers about a body or entity that the problem replaces. */
const ENTITY_HEADERS = [
  'Content-Encoding',
  'Content-Length',
  'Content-Location',
  'Content-Disposition',
  'ETag',
  'Last-Modified',
];
/** Members Nest puts in an exception's body, which the problem's own members replace. */
const NEST_MEMBERS = new Set(['statusCode', 'error', 'message']);

@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Hub');

  /** `allowed` tells an unknown method on a known path (405) from an unknown path (404). */
  constructor(private readonly allowed?: AllowedMethods) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const request = host.switchToHttp().getRequest<Request>();
    const response = host.switchToHttp().getResponse<Response>();
    const path = request.path;
    if (response.headersSent) {
      // A body was already streaming: cut it, so the client sees a truncated answer.
      this.logger.error(
        `${request.method} ${path}: failed while answering: ${describe(exception)}`,
      );
      response.destroy();
      return;
    }
    let problem: ProblemBody;
    if (exception instanceof NotFoundException && isUnroutable(exception, request)) {
      const methods = this.allowed?.of(path);
      if (methods && request.method === 'OPTIONS') {
        response.setHeader('Allow', methods.join(', '));
        response.status(HttpStatus.NO_CONTENT).end();
        return;
      }
      if (methods) response.setHeader('Allow', methods.join(', '));
      problem = methods
        ? {
            status: HttpStatus.METHOD_NOT_ALLOWED,
            detail: `${path} does not take ${request.method}; it takes ${methods.join(', ')}`,
          }
        : { status: HttpStatus.NOT_FOUND, detail: `there is no ${path}` };
    } else if (exception instanceof HttpException) {
      problem = fromHttpException(exception);
    } else {
      this.logger.error(`${request.method} ${path}: ${describe(exception)}`);
      problem = {
        status: HttpStatus.INTERNAL_SERVER_ERROR,
        detail: 'the hub failed to answer this request; the error is in its log',
      };
    }
    const { status, detail, ...extensions } = problem;
    send(response, {
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Error',
      status,
      detail,
      instance: path,
      ...extensions,
    });
  }
}

/** The 404 of Nest's handler for requests no route takes (its message names the URL). */
function isUnroutable(exception: NotFoundException, request: Request): boolean {
  return exception.message === `Cannot ${request.method} ${request.originalUrl}`;
}

function send(response: Response, problem: Problem): void {
  for (const header of ENTITY_HEADERS) response.removeHeader(header);
  const body = JSON.stringify(problem);
  response.status(problem.status);
  response.setHeader('Content-Type', PROBLEM_JSON);
  response.setHeader('Content-Length', String(Buffer.byteLength(body)));
  response.setHeader('Cache-Control', 'no-store');
  response.end(body);
}

/** A problem before the filter adds `type`, `title` and `instance`. */
interface ProblemBody {
  readonly status: number;
  readonly detail: string;
  readonly issues?: readonly ProblemIssue[];
  readonly [extension: string]: unknown;
}

function fromHttpException(exception: HttpException): ProblemBody {
  const status = exception.getStatus();
  const parser = bodyParserProblem(exception.cause, status);
  if (parser) return parser;
  const body = exception.getResponse();
  if (typeof body === 'string') return { status, detail: body };
  const { message, ...members } = body as Record<string, unknown>;
  const extensions = Object.fromEntries(
    Object.entries(members).filter(([name]) => !NEST_MEMBERS.has(name) && !STANDARD.has(name)),
  );
  if (Array.isArray(message)) {
    // A list of messages without issues (not from our ValidationPipe): each is an issue.
    const issues: ProblemIssue[] = message.map((reason) => ({
      field: '(request)',
      reason: String(reason),
    }));
    return { issues, ...extensions, status, detail: message.join('; ') };
  }
  return {
    ...extensions,
    status,
    detail: typeof message === 'string' ? message : (STATUS_CODES[status] ?? 'error'),
  };
}

const STANDARD = new Set(['type', 'title', 'status', 'detail', 'instance']);

/** The errors of Express's body parser (http-errors with a `type`), in words. */
function bodyParserProblem(cause: unknown, status: number): ProblemBody | undefined {
  if (typeof cause !== 'object' || cause === null) return undefined;
  const error = cause as { type?: unknown; limit?: number; encoding?: string; charset?: string };
  switch (error.type) {
    case 'entity.too.large':
      return {
        status: HttpStatus.PAYLOAD_TOO_LARGE,
        detail: `the body is too large: the limit is ${error.limit} bytes`,
      };
    case 'entity.parse.failed':
      return {
        status: HttpStatus.BAD_REQUEST,
        detail: `the body is not valid JSON: ${(cause as Error).message}`,
        issues: [{ field: '(body)', reason: 'must be valid JSON' }],
      };
    case 'encoding.unsupported':
      return {
        status: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        detail: `Content-Encoding "${error.encoding}" is not supported (gzip, deflate, br or none)`,
      };
    case 'charset.unsupported':
      return {
        status: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        detail: `charset "${error.charset}" is not supported (utf-8)`,
      };
    case 'request.aborted':
    case 'request.size.invalid':
      return { status, detail: (cause as Error).message };
    default:
      return undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
