import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsString, Length, Matches } from 'class-validator';
import { Optional } from '../http/validation.js';

const SITE_ID = /^[a-z0-9][a-z0-9-]{2,63}$/;

export class CreateSiteDto {
  @ApiProperty({
    description: 'A name for people; not unique.',
    example: 'shop.example.com',
    minLength: 1,
    maxLength: 200,
  })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiPropertyOptional({
    description: 'Site id (URL-safe, 3-64 chars); generated when absent.',
    example: 'shop',
    pattern: SITE_ID.source,
  })
  @Optional()
  @Matches(SITE_ID, { message: 'id must be 3-64 characters of a-z, 0-9 and -' })
  id?: string;
}

export class RotateKeyDto {
  @ApiPropertyOptional({
    description:
      'Revoke every existing key of the site (default true). False keeps them for a grace period you end with DELETE.',
    default: true,
  })
  @Optional()
  @IsBoolean()
  revokeExisting?: boolean;
}

export class SiteView {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() createdAt!: string;
  @ApiProperty({ description: 'Bumped by every change of rules or datasets.' })
  rulesRevision!: number;
  @ApiProperty({ description: 'Revision the current snapshot was built from.' })
  builtRevision!: number;
  @ApiProperty({ nullable: true, type: Number }) currentVersion!: number | null;
}

export class IssuedKeyView {
  @ApiProperty() keyId!: string;
  @ApiProperty({
    description: 'The site key. Shown once: store it now; the hub keeps only its hash.',
  })
  key!: string;
}

export class CreatedSiteView {
  @ApiProperty({ type: SiteView }) site!: SiteView;
  @ApiProperty({ type: IssuedKeyView }) credentials!: IssuedKeyView;
}

export class KeyView {
  @ApiProperty() keyId!: string;
  @ApiProperty() createdAt!: string;
  @ApiProperty({ nullable: true, type: String }) revokedAt!: string | null;
}
