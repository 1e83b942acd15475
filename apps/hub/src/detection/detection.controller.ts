/**
 * Detection through the API (admin token): each site's detector settings, and the automatic
 * blocks the detectors published, with their evidence, listed and revocable.
 *
 * - `GET /v1/sites/:siteId/detection`: the settings in force (the defaults until changed).
 * - `PUT /v1/sites/:siteId/detection`: any subset of detectors and fields; the rest stays.
 *   422 naming every bad field, nothing changed.
 * - `GET /v1/sites/:siteId/automatic-blocks?status=`: newest first.
 * - `GET|DELETE /v1/sites/:siteId/automatic-blocks/:blockId`: one block; DELETE revokes it
 *   (out of the next snapshot, built at once) and answers the revoked block.
 * - `POST /v1/sites/:siteId/automatic-blocks/:blockId/keep`: the block's rule becomes a
 *   permanent rule of the site, and the block is revoked.
 */
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import type { Rule } from '@rampart/rules-core/rules/model';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { AdminAuth } from '../auth/admin.guard.js';
import { schemaComponent } from '../http/openapi.js';
import { ApiProblems, JSON_BODY_PROBLEMS } from '../http/problem-details.js';
import { RULE_SCHEMA } from '../rules/rules.dto.js';
import {
  AutomaticBlocksService,
  type AutomaticBlockView,
  type BlockStatus,
} from './automatic-blocks.service.js';
import { type DetectionSettings, detectionSettingsSchema } from './detection-settings.js';
import { DetectionSettingsService } from './detection-settings.service.js';
import type { BlockSubject, Evidence } from './detectors.js';

const STATUSES: readonly BlockStatus[] = ['active', 'expired', 'revoked', 'allowed'];

export class BlocksQuery {
  @ApiPropertyOptional({
    enum: STATUSES,
    description:
      'active: in force; expired; revoked through the API; allowed: an allow rule kept it from blocking. Default all.',
  })
  @IsOptional()
  @IsIn(STATUSES, { message: `status must be one of ${STATUSES.join(', ')}` })
  status?: BlockStatus;

  @ApiPropertyOptional({ type: 'integer', default: 100, minimum: 1, maximum: 1000 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(1000)
  limit?: number;
}

const SUBJECT_SCHEMA = schemaComponent('BlockSubject', {
  description: 'What an automatic block covers.',
  oneOf: [
    {
      type: 'object',
      required: ['kind', 'addresses'],
      properties: {
        kind: { type: 'string', enum: ['ip'] },
        addresses: { type: 'array', items: { type: 'string' } },
      },
    },
    {
      type: 'object',
      required: ['kind', 'asn'],
      properties: { kind: { type: 'string', enum: ['asn'] }, asn: { type: 'integer' } },
    },
    {
      type: 'object',
      required: ['kind', 'country'],
      properties: { kind: { type: 'string', enum: ['country'] }, country: { type: 'string' } },
    },
    {
      type: 'object',
      required: ['kind', 'name', 'value'],
      properties: {
        kind: { type: 'string', enum: ['header'] },
        name: { type: 'string' },
        value: { type: 'string' },
      },
    },
  ],
});

const EVIDENCE_SCHEMA = schemaComponent('BlockEvidence', {
  type: 'object',
  description: 'Why the detector fired.',
  required: ['count', 'threshold', 'windowSeconds', 'sampleRequestIds'],
  properties: {
    count: { type: 'integer', description: 'What was counted within the window.' },
    threshold: { type: 'integer' },
    windowSeconds: { type: 'integer' },
    attempts: { type: 'integer', description: 'Share detectors: the logins judged.' },
    share: { type: 'number', description: 'Share detectors: the share of them that failed.' },
    account: { type: 'string', description: 'The account (its HMAC) of a distributed attack.' },
    addresses: { type: 'integer', description: 'Distinct addresses the failures came from.' },
    baseline: {
      type: 'number',
      description: 'Surge detector: the failed logins such a window usually holds.',
    },
    ruleId: { type: 'string', description: 'The rate-limit rule whose budget was exceeded.' },
    key: { type: 'string', description: 'Its key.' },
    sampleRequestIds: { type: 'array', items: { type: 'string' } },
  },
});

const SETTINGS_SCHEMA = schemaComponent('DetectionSettings', detectionSettingsSchema(true));
const SETTINGS_UPDATE_SCHEMA = schemaComponent(
  'DetectionSettingsUpdate',
  detectionSettingsSchema(false),
);

export class AutomaticBlockRecord implements AutomaticBlockView {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'The rule id in the snapshot, as reports name it.' })
  ruleId!: string;
  @ApiProperty() detector!: string;
  @ApiProperty({ allOf: [SUBJECT_SCHEMA] })
  subject!: BlockSubject;
  @ApiProperty({ enum: ['enforce', 'monitor'] }) mode!: 'enforce' | 'monitor';
  @ApiProperty({ enum: ['block', 'rate_limit'] }) action!: 'block' | 'rate_limit';
  @ApiProperty({ enum: STATUSES }) status!: BlockStatus;
  @ApiProperty({ allOf: [EVIDENCE_SCHEMA] })
  evidence!: Evidence;
  @ApiProperty() createdAt!: string;
  @ApiProperty() expiresAt!: string;
  @ApiProperty({ nullable: true, type: String }) revokedAt!: string | null;
  @ApiProperty({ type: [String] }) allowedBy!: readonly string[];
}

@ApiTags('detection')
@AdminAuth()
@ApiProblems({ 404: 'No such site.' })
@ApiExtraModels(AutomaticBlockRecord)
@Controller('v1/sites/:siteId')
export class DetectionController {
  constructor(
    private readonly settings: DetectionSettingsService,
    private readonly blocks: AutomaticBlocksService,
  ) {}

  @Get('detection')
  @ApiOkResponse({ schema: SETTINGS_SCHEMA })
  getSettings(@Param('siteId') siteId: string): Promise<DetectionSettings> {
    return this.settings.get(siteId);
  }

  @Put('detection')
  @ApiBody({ schema: SETTINGS_UPDATE_SCHEMA, required: true })
  @ApiOkResponse({ schema: SETTINGS_SCHEMA, description: 'The settings now in force.' })
  @ApiProblems(JSON_BODY_PROBLEMS, {
    422: 'A setting is invalid (`issues` names each); nothing was changed.',
  })
  putSettings(@Param('siteId') siteId: string, @Body() body: unknown): Promise<DetectionSettings> {
    return this.settings.update(siteId, body);
  }

  @Get('automatic-blocks')
  @ApiOkResponse({ type: [AutomaticBlockRecord], description: 'Newest first.' })
  @ApiProblems({ 400: 'A query parameter is invalid (`issues` names each).' })
  list(
    @Param('siteId') siteId: string,
    @Query() query: BlocksQuery,
  ): Promise<AutomaticBlockView[]> {
    return this.blocks.list(siteId, query.status, query.limit ?? 100);
  }

  @Get('automatic-blocks/:blockId')
  @ApiOkResponse({ type: AutomaticBlockRecord })
  @ApiProblems({ 404: 'No such site or block.' })
  get(
    @Param('siteId') siteId: string,
    @Param('blockId') blockId: string,
  ): Promise<AutomaticBlockView> {
    return this.blocks.get(siteId, blockId);
  }

  @Post('automatic-blocks/:blockId/keep')
  @HttpCode(201)
  @ApiCreatedResponse({
    schema: RULE_SCHEMA,
    description: "The permanent rule now in the site's rules; the block is revoked.",
  })
  @ApiProblems({
    404: 'No such site or block.',
    409: 'The block is not active (expired, revoked or allowed).',
    422: 'The rule could not be added (its id is taken).',
  })
  keep(@Param('siteId') siteId: string, @Param('blockId') blockId: string): Promise<Rule> {
    return this.blocks.keep(siteId, blockId);
  }

  @Delete('automatic-blocks/:blockId')
  @ApiOkResponse({ type: AutomaticBlockRecord, description: 'The block, now revoked.' })
  @ApiProblems({ 404: 'No such site or block.' })
  revoke(
    @Param('siteId') siteId: string,
    @Param('blockId') blockId: string,
  ): Promise<AutomaticBlockView> {
    return this.blocks.revoke(siteId, blockId);
  }
}
