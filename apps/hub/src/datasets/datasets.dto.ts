import { ApiProperty } from '@nestjs/swagger';
import type { DatasetKind } from '../database/schema.js';
import type { DatasetView, UploadResult } from './datasets.service.js';

export class DatasetViewSchema implements DatasetView {
  @ApiProperty({ enum: ['country', 'asn', 'reputation'] }) kind!: DatasetKind;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'SHA-256 of the file as uploaded.' }) sha256!: string;
  @ApiProperty() bytes!: number;
  @ApiProperty({ description: 'Ranges or addresses imported.' }) entries!: number;
  @ApiProperty() lines!: number;
  @ApiProperty() skippedLines!: number;
  @ApiProperty() createdAt!: string;
}

export class SkippedLineView {
  @ApiProperty() file!: string;
  @ApiProperty() line!: number;
  @ApiProperty() reason!: string;
}

export class UploadResultView extends DatasetViewSchema implements UploadResult {
  @ApiProperty({ type: [SkippedLineView], description: 'The first skipped lines.' })
  issues!: SkippedLineView[];
}
