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
} from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentSite, SiteKeyAuth, type SitePrincipal } from '../auth/site-key.guard.js';
import { schemaComponent } from '../http/openapi.js';
import { ApiProblems } from '../http/problem-details.js';
import { parseReportBatch } from './report-batch.js';
import { reportBatchJsonSchema } from './report-batch.schema.js';
import { ReportQueueService } from './report-queue.service.js';

/** Issues listed in a refusal at most (a batch of 10 000 bad events would list 150 000). */
const MAX_ISSUES = 50;

export class AcceptedBatchView {
  @ApiProperty({ type: Boolean, description: 'Always true.' }) accepted!: true;
  @ApiProperty() batchId!: string;
}

@ApiTags('reports')
@SiteKeyAuth()
@Controller('v1/reports')
export class ReportsController {
  constructor(private readonly queue: ReportQueueService) {}

  @Post()
  @HttpCode(202)
  @ApiBody({
    required: true,
    schema: schemaComponent('ReportBatch', reportBatchJsonSchema()),
    description: 'JSON, compressed or not (`Content-Encoding` gzip, deflate, br or none).',
  })
  @ApiAcceptedResponse({
    type: AcceptedBatchView,
    description: 'The batch is on the ingestion queue.',
  })
  @ApiProblems(
    { 400: 'The batch is malformed; `issues` names each field (nothing of it is stored).' },
    { 413: 'The (decompressed) body is larger than HUB_MAX_JSON_BYTES.' },
    { 415: 'Not JSON, or an unsupported Content-Encoding.' },
    { 503: 'The ingestion queue is full or Redis is away: retry after `Retry-After`.' },
  )
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
