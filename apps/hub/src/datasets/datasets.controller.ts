import {
  applyDecorators,
  BadRequestException,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  PayloadTooLargeException,
  Put,
  Query,
  Req,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { AdminAuth } from '../auth/admin.guard.js';
import { HUB_CONFIG, type HubConfig } from '../config/hub-config.js';
import { DatasetKind } from '../database/schema.js';
import { ApiProblems } from '../http/problem-details.js';
import { DatasetViewSchema, UploadResultView } from './datasets.dto.js';
import { DatasetsService, DatasetView, UploadResult } from './datasets.service.js';

const KINDS: readonly DatasetKind[] = ['country', 'asn', 'reputation'];
const NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
const TEXT_TYPES = ['text/csv', 'text/plain', 'application/octet-stream'];

function kindOf(kind: string): DatasetKind {
  if (!KINDS.includes(kind as DatasetKind)) {
    throw new BadRequestException(`kind must be one of ${KINDS.join(', ')}`);
  }
  return kind as DatasetKind;
}

function nameOf(name: string): string {
  if (!NAME.test(name))
    throw new BadRequestException(
      'name must be 1-64 characters of a-z 0-9 _ . - (starting with a letter or digit)',
    );
  return name;
}

/** The path parameters of one dataset, as `kindOf` and `nameOf` check them. */
const DatasetParams = () =>
  applyDecorators(
    ApiParam({ name: 'kind', enum: KINDS }),
    ApiParam({ name: 'name', schema: { type: 'string', pattern: NAME.source } }),
  );

@ApiTags('datasets')
@AdminAuth()
@Controller('v1/datasets')
export class DatasetsController {
  constructor(
    private readonly datasets: DatasetsService,
    @Inject(HUB_CONFIG) private readonly config: HubConfig,
  ) {}

  @Get()
  @ApiOkResponse({
    type: [DatasetViewSchema],
    description: 'Every dataset, with its size, hash and line counts.',
  })
  list(): Promise<DatasetView[]> {
    return this.datasets.list();
  }

  @Put(':kind/:name')
  @DatasetParams()
  @ApiConsumes(...TEXT_TYPES)
  @ApiBody({
    required: true,
    description:
      'country: `start,end,CC` lines; asn: `start,end,asn,org` lines (the @ip-location-db CSV formats); reputation: one CIDR or address per line, `#`/`;` comments (FireHOL/Spamhaus style).',
    schema: { type: 'string', format: 'binary' },
  })
  @ApiQuery({
    name: 'onBadLine',
    enum: ['skip', 'reject'],
    required: false,
    description: 'Default skip.',
  })
  @ApiOkResponse({
    type: UploadResultView,
    description: 'Imported; the builds of every site are queued.',
  })
  @ApiProblems(
    { 400: 'A path or query parameter is invalid.' },
    {
      422: 'Unusable content: no usable line, or a bad line with `onBadLine=reject`; `issues` names each line (`file`, `line`, `reason`).',
    },
    { 413: 'Larger than HUB_MAX_UPLOAD_BYTES.' },
    { 415: 'The body is not text/csv, text/plain or application/octet-stream.' },
  )
  upload(
    @Param('kind') kind: string,
    @Param('name') name: string,
    @Query('onBadLine') onBadLine = 'skip',
    @Req() request: Request,
  ): Promise<UploadResult> {
    const datasetKind = kindOf(kind);
    const datasetName = nameOf(name);
    if (onBadLine !== 'skip' && onBadLine !== 'reject') {
      throw new BadRequestException('onBadLine must be "skip" or "reject"');
    }
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (!TEXT_TYPES.includes(type)) {
      throw new UnsupportedMediaTypeException(
        `Content-Type must be one of ${TEXT_TYPES.join(', ')}`,
      );
    }
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.config.maxUploadBytes) {
      throw new PayloadTooLargeException(
        `the upload exceeds the limit of ${this.config.maxUploadBytes} bytes`,
      );
    }
    return this.datasets.upload(datasetKind, datasetName, request, onBadLine);
  }

  @Delete(':kind/:name')
  @DatasetParams()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Removed; the builds of every site are queued.' })
  @ApiProblems(
    { 400: 'A path parameter is invalid.' },
    { 404: 'No such dataset.' },
    { 409: 'A rule of some site names this reputation list.' },
  )
  async remove(@Param('kind') kind: string, @Param('name') name: string): Promise<void> {
    await this.datasets.remove(kindOf(kind), nameOf(name));
  }
}
