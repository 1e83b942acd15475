/**
 * `POST /v1/reports`: report batches from WAF clients (site key in `Authorization: Bearer`).
 *
 * The body is the client's JSON batch, compressed or not (`Content-Encoding` gzip, deflate, br
 * or none; anything else is 415), at most `HUB_MAX_JSON_BYTES` decompressed (413 beyond). A batch
 * that is not valid is refused whole with 400 and every problem, each naming its field; nothing
 * of it is stored. A valid batch is answered 202 once it is durably on the ingestion queue, never
 * processed while the client waits; 503 with `Retry-After` when the queue is deeper than
 * `HUB_REPORT_QUEUE_MAX` or Redis is away (the client retries with backoff).
 */
import {
  BadRequestException,
  Body,
  Controller,
  HttpCode,
  Post,
  Res,
  ServiceUnavailableException,
  UseGuards,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiPayloadTooLargeResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentSite, SiteKeyGuard, type SitePrincipal } from '../auth/site-key.guard.js';
import { parseReportBatch } from './report-batch.js';
import { ReportQueueService } from './report-queue.service.js';

/** Issues listed in a refusal at most (a batch of 10 000 bad events would list 150 000). */
const MAX_ISSUES = 50;

@ApiTags('reports')
@ApiBearerAuth('site-key')
@UseGuards(SiteKeyGuard)
@Controller('v1/reports')
export class ReportsController {
  constructor(private readonly queue: ReportQueueService) {}

  @Post()
  @HttpCode(202)
  @ApiAcceptedResponse({ description: 'The batch is on the ingestion queue.' })
  @ApiBadRequestResponse({ description: 'The batch is malformed; `issues` names each field.' })
  @ApiUnauthorizedResponse({ description: 'Missing or invalid site key.' })
  @ApiPayloadTooLargeResponse({ description: 'The (decompressed) body is too large.' })
  @ApiUnsupportedMediaTypeResponse({ description: 'Not JSON, or an unsupported Content-Encoding.' })
  @ApiServiceUnavailableResponse({
    description: 'The ingestion queue is full: retry after Retry-After.',
  })
  async receive(
    @CurrentSite() site: SitePrincipal,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<{ accepted: true; batchId: string }> {
    const parsed = parseReportBatch(body);
    if (!parsed.ok) {
      const [first] = parsed.issues;
      const more = parsed.issues.length > 1 ? ` (and ${parsed.issues.length - 1} more)` : '';
      throw new BadRequestException({
        statusCode: 400,
        error: 'Bad Request',
        message: `${first?.field}: ${first?.reason}${more}`,
        issues: parsed.issues.slice(0, MAX_ISSUES),
      });
    }
    const queued = await this.queue.enqueue(site.siteId, parsed.batch);
    if (queued !== 'queued') {
      response.setHeader('Retry-After', queued === 'full' ? '5' : '10');
      throw new ServiceUnavailableException(
        queued === 'full'
          ? 'the ingestion queue is full; retry later'
          : 'reports cannot be queued right now; retry later',
      );
    }
    return { accepted: true, batchId: parsed.batch.batchId };
  }
}
