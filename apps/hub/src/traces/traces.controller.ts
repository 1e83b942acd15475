/**
 * The trace of an event's request, for the dashboard's event view: `GET
 * /v1/sites/{siteId}/traces/{traceId}` answers the spans Jaeger holds for a trace one of the
 * site's events names (never an arbitrary trace: the hub is not an open window onto Jaeger),
 * with a link to Jaeger's own page.
 */
import { BadGatewayException, Controller, Get, NotFoundException, Param } from '@nestjs/common';
import { ApiOkResponse, ApiParam, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminAuth } from '../auth/admin.guard.js';
import { ApiProblems } from '../http/problem-details.js';
import { invalidInput } from '../http/validation.js';
import { ReportStore } from '../reports/report-store.js';
import { SitesService } from '../sites/sites.service.js';
import { JaegerQueryService, JaegerUnavailableError } from './jaeger-query.service.js';
import { traceView } from './trace-view.js';

export const TRACE_ID = /^[0-9a-f]{32}$/;

export class TraceSpanRecordView {
  @ApiProperty() spanId!: string;
  @ApiProperty({ nullable: true, type: String }) parentSpanId!: string | null;
  @ApiProperty() service!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ description: "From the trace's start, ms." }) startMs!: number;
  @ApiProperty() durationMs!: number;
  @ApiProperty() error!: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] },
  })
  attributes!: Record<string, string | number | boolean>;
}

export class TraceRecordView {
  @ApiProperty() traceId!: string;
  @ApiProperty({ format: 'date-time' }) startTime!: string;
  @ApiProperty() durationMs!: number;
  @ApiProperty({ type: [TraceSpanRecordView], description: 'In start order.' })
  spans!: TraceSpanRecordView[];
  @ApiProperty({ nullable: true, type: String, description: "The trace's page in Jaeger's UI." })
  jaegerUrl!: string | null;
}

@ApiTags('traffic')
@AdminAuth()
@Controller('v1/sites/:siteId/traces')
export class TracesController {
  constructor(
    private readonly sites: SitesService,
    private readonly store: ReportStore,
    private readonly jaeger: JaegerQueryService,
  ) {}

  @Get(':traceId')
  @ApiParam({ name: 'traceId', schema: { type: 'string', pattern: TRACE_ID.source } })
  @ApiOkResponse({ type: TraceRecordView })
  @ApiProblems(
    { 400: 'traceId is not 32 lower-case hex digits.' },
    {
      404: 'No such site; no event of the site names this trace; the hub has no Jaeger configured (HUB_JAEGER_QUERY_URL); or Jaeger no longer holds the trace.',
    },
    { 502: 'Jaeger did not answer.' },
  )
  async trace(
    @Param('siteId') siteId: string,
    @Param('traceId') traceId: string,
  ): Promise<TraceRecordView> {
    await this.sites.get(siteId);
    if (!TRACE_ID.test(traceId))
      throw invalidInput([{ field: 'traceId', reason: 'must be 32 lower-case hex digits' }]);
    if (!(await this.store.hasTrace(siteId, traceId)))
      throw new NotFoundException('no event of this site names that trace');
    if (!this.jaeger.configured)
      throw new NotFoundException(
        'this hub has no Jaeger to read traces from (set HUB_JAEGER_QUERY_URL)',
      );
    let lookup: Awaited<ReturnType<JaegerQueryService['trace']>>;
    try {
      lookup = await this.jaeger.trace(traceId);
    } catch (error) {
      if (error instanceof JaegerUnavailableError) throw new BadGatewayException(error.message);
      throw error;
    }
    if (!lookup.found) throw new NotFoundException('Jaeger does not hold this trace (any more)');
    return traceView(lookup.trace, this.jaeger.uiUrl) as TraceRecordView;
  }
}
