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
 */
import { Body, Controller, Delete, Get, Param, Put, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { AdminGuard } from '../auth/admin.guard.js';
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

  @ApiPropertyOptional({ default: 100, minimum: 1, maximum: 1000 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(1000)
  limit?: number;
}

export class AutomaticBlockRecord implements AutomaticBlockView {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'The rule id in the snapshot, as reports name it.' })
  ruleId!: string;
  @ApiProperty() detector!: string;
  @ApiProperty({
    description:
      'What is blocked: {kind: ip, addresses}, {kind: asn, asn}, {kind: country, country} or {kind: header, name, value}.',
    type: 'object',
    additionalProperties: true,
  })
  subject!: BlockSubject;
  @ApiProperty({ enum: ['enforce', 'monitor'] }) mode!: 'enforce' | 'monitor';
  @ApiProperty({ enum: ['block', 'rate_limit'] }) action!: 'block' | 'rate_limit';
  @ApiProperty({ enum: STATUSES }) status!: BlockStatus;
  @ApiProperty({
    description:
      'count, threshold, windowSeconds, sampleRequestIds; attempts and share, account and addresses, ruleId and key where the detector has them.',
    type: 'object',
    additionalProperties: true,
  })
  evidence!: Evidence;
  @ApiProperty() createdAt!: string;
  @ApiProperty() expiresAt!: string;
  @ApiProperty({ nullable: true, type: String }) revokedAt!: string | null;
  @ApiProperty({ type: [String] }) allowedBy!: readonly string[];
}

@ApiTags('detection')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@ApiExtraModels(AutomaticBlockRecord)
@Controller('v1/sites/:siteId')
export class DetectionController {
  constructor(
    private readonly settings: DetectionSettingsService,
    private readonly blocks: AutomaticBlocksService,
  ) {}

  @Get('detection')
  @ApiOkResponse({ schema: detectionSettingsSchema(true) })
  @ApiNotFoundResponse({ description: 'No such site.' })
  getSettings(@Param('siteId') siteId: string): Promise<DetectionSettings> {
    return this.settings.get(siteId);
  }

  @Put('detection')
  @ApiBody({ schema: detectionSettingsSchema(false) })
  @ApiOkResponse({
    schema: detectionSettingsSchema(true),
    description: 'The settings now in force.',
  })
  @ApiNotFoundResponse({ description: 'No such site.' })
  @ApiUnprocessableEntityResponse({ description: 'A setting is invalid; `issues` names each.' })
  putSettings(@Param('siteId') siteId: string, @Body() body: unknown): Promise<DetectionSettings> {
    return this.settings.update(siteId, body);
  }

  @Get('automatic-blocks')
  @ApiOkResponse({ type: [AutomaticBlockRecord], description: 'Newest first.' })
  @ApiNotFoundResponse({ description: 'No such site.' })
  list(
    @Param('siteId') siteId: string,
    @Query() query: BlocksQuery,
  ): Promise<AutomaticBlockView[]> {
    return this.blocks.list(siteId, query.status, query.limit ?? 100);
  }

  @Get('automatic-blocks/:blockId')
  @ApiOkResponse({ type: AutomaticBlockRecord })
  @ApiNotFoundResponse({ description: 'No such site or block.' })
  get(
    @Param('siteId') siteId: string,
    @Param('blockId') blockId: string,
  ): Promise<AutomaticBlockView> {
    return this.blocks.get(siteId, blockId);
  }

  @Delete('automatic-blocks/:blockId')
  @ApiOkResponse({ type: AutomaticBlockRecord, description: 'The block, now revoked.' })
  @ApiNotFoundResponse({ description: 'No such site or block.' })
  revoke(
    @Param('siteId') siteId: string,
    @Param('blockId') blockId: string,
  ): Promise<AutomaticBlockView> {
    return this.blocks.revoke(siteId, blockId);
  }
}
