/**
 * What the site's WAF did, for operators and the dashboard (admin token): requests per minute
 * by outcome, the top addresses, countries, AS numbers, paths, rules and user agents over a
 * window, and recent events with their request ids and snapshot versions.
 */
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { AdminAuth } from '../auth/admin.guard.js';
import { ApiProblems } from '../http/problem-details.js';
import { DATE_TIME_PATTERN, IsDateTime } from '../http/validation.js';
import { SitesService } from '../sites/sites.service.js';
import { ACTIONS, MODES, OUTCOMES } from './report-batch.js';
import { DIMENSIONS, type Dimension, ReportStore } from './report-store.js';

const HOUR_MS = 3_600_000;

export class WindowQuery {
  @ApiPropertyOptional({
    description: 'Start of the window (ISO 8601); default an hour before `to`.',
    format: 'date-time',
    pattern: DATE_TIME_PATTERN,
  })
  @IsOptional()
  @IsDateTime()
  from?: string;

  @ApiPropertyOptional({
    description: 'End of the window (ISO 8601, exclusive); default now.',
    format: 'date-time',
    pattern: DATE_TIME_PATTERN,
  })
  @IsOptional()
  @IsDateTime()
  to?: string;
}

export class TopQuery extends WindowQuery {
  @ApiProperty({ enum: DIMENSIONS })
  @IsIn(DIMENSIONS, { message: `dimension must be one of ${DIMENSIONS.join(', ')}` })
  dimension!: Dimension;

  @ApiPropertyOptional({ enum: OUTCOMES, description: 'Only requests with this outcome.' })
  @IsOptional()
  @IsIn(OUTCOMES, { message: `outcome must be one of ${OUTCOMES.join(', ')}` })
  outcome?: string;

  @ApiPropertyOptional({ type: 'integer', default: 10, minimum: 1, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(100)
  limit?: number;
}

export class EventsQuery {
  @ApiPropertyOptional({ enum: OUTCOMES })
  @IsOptional()
  @IsIn(OUTCOMES, { message: `outcome must be one of ${OUTCOMES.join(', ')}` })
  outcome?: string;

  @ApiPropertyOptional({ enum: ACTIONS })
  @IsOptional()
  @IsIn(ACTIONS, { message: `action must be one of ${ACTIONS.join(', ')}` })
  action?: string;

  @ApiPropertyOptional({ enum: MODES })
  @IsOptional()
  @IsIn(MODES, { message: `mode must be one of ${MODES.join(', ')}` })
  mode?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 128 })
  @IsOptional()
  @IsString()
  @Length(1, 128)
  ruleId?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 64 })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  ip?: string;

  @ApiPropertyOptional({
    description: 'Only events before this time (ISO 8601): the next page.',
    format: 'date-time',
    pattern: DATE_TIME_PATTERN,
  })
  @IsOptional()
  @IsDateTime()
  before?: string;

  @ApiPropertyOptional({ type: 'integer', default: 50, minimum: 1, maximum: 500 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(500)
  limit?: number;
}

export class TrafficMinuteView {
  @ApiProperty({ example: '2026-12-01T12:34' }) minute!: string;
  @ApiProperty() allowed!: number;
  @ApiProperty() passed!: number;
  @ApiProperty() blocked!: number;
  @ApiProperty() rate_limited!: number;
  @ApiProperty({ description: 'Let through by monitor mode: would have been blocked or limited.' })
  monitored!: number;
  @ApiProperty({ description: 'No snapshot yet, or the WAF failed: the fail mode decided.' })
  unevaluated!: number;
}

export class SignalMinuteView {
  @ApiProperty() minute!: string;
  @ApiProperty() kind!: string;
  @ApiProperty() count!: number;
}

export class TrafficView {
  @ApiProperty() from!: string;
  @ApiProperty() to!: string;
  @ApiProperty({ type: [TrafficMinuteView], description: 'Minutes with traffic, oldest first.' })
  minutes!: TrafficMinuteView[];
  @ApiProperty({ type: [SignalMinuteView] })
  signals!: SignalMinuteView[];
}

export class TopEntryView {
  @ApiProperty() value!: string;
  @ApiProperty() count!: number;
}

export class EventRecordView {
  @ApiProperty() time!: string;
  @ApiProperty() requestId!: string;
  @ApiProperty() instance!: string;
  @ApiProperty() ip!: string;
  @ApiProperty({ nullable: true, type: String }) country!: string | null;
  @ApiProperty({ nullable: true, type: Number }) asn!: number | null;
  @ApiProperty() method!: string;
  @ApiProperty() host!: string;
  @ApiProperty() path!: string;
  @ApiProperty() userAgent!: string;
  @ApiProperty() action!: string;
  @ApiProperty() mode!: string;
  @ApiProperty() outcome!: string;
  @ApiProperty({ nullable: true, type: String }) ruleId!: string | null;
  @ApiProperty({ nullable: true, type: String }) category!: string | null;
  @ApiProperty({ nullable: true, type: String }) monitoredRuleId!: string | null;
  @ApiProperty({ nullable: true, type: Number }) snapshotVersion!: number | null;
  @ApiProperty() sampled!: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "The request's trace id (32 hex) when the app traced it: GET /v1/sites/{id}/traces/{traceId} shows it.",
  })
  traceId!: string | null;
}

/** The window a query names: `[from, to)`, by default the last hour. */
function windowOf(query: WindowQuery): { from: string; to: string } {
  const to = query.to ? new Date(query.to) : new Date();
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - HOUR_MS);
  return { from: from.toISOString(), to: to.toISOString() };
}

@ApiTags('traffic')
@AdminAuth()
@ApiProblems(
  { 400: 'A query parameter is invalid (`issues` names each).' },
  { 404: 'No such site.' },
)
@Controller('v1/sites/:siteId')
export class TrafficController {
  constructor(
    private readonly store: ReportStore,
    private readonly sites: SitesService,
  ) {}

  @Get('traffic')
  @ApiOkResponse({ type: TrafficView })
  async traffic(
    @Param('siteId') siteId: string,
    @Query() query: WindowQuery,
  ): Promise<TrafficView> {
    await this.sites.get(siteId);
    const { from, to } = windowOf(query);
    const [minutes, signals] = await Promise.all([
      this.store.traffic(siteId, from, to),
      this.store.signals(siteId, from, to),
    ]);
    return { from, to, minutes, signals };
  }

  @Get('traffic/top')
  @ApiOkResponse({ type: [TopEntryView] })
  async top(@Param('siteId') siteId: string, @Query() query: TopQuery): Promise<TopEntryView[]> {
    await this.sites.get(siteId);
    const { from, to } = windowOf(query);
    return this.store.top(siteId, query.dimension, from, to, query.outcome, query.limit ?? 10);
  }

  @Get('events')
  @ApiOkResponse({ type: [EventRecordView], description: 'Newest first.' })
  async events(
    @Param('siteId') siteId: string,
    @Query() query: EventsQuery,
  ): Promise<EventRecordView[]> {
    await this.sites.get(siteId);
    return this.store.events(siteId, { ...query, limit: query.limit ?? 50 });
  }
}
