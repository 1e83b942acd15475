import { ApiProperty } from '@nestjs/swagger';
import { IsArray } from 'class-validator';

/**
 * The rule-set document (`{"rules": [...]}`), as `rampart snapshot build --rules` reads it. Each
 * rule's shape (types ip, country, asn, reputation, pattern, rate_limit) is documented in
 * packages/rules-core/README.md and validated by rules-core, which names the rule, field and
 * reason of every problem.
 */
export class RuleSetDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [
      {
        id: 'block-scanner',
        type: 'pattern',
        action: 'block',
        when: [{ field: 'user_agent', match: 'contains', value: 'sqlmap' }],
      },
    ],
  })
  @IsArray()
  rules!: unknown[];
}

export class RuleListView {
  @ApiProperty({ description: 'The site revision these rules belong to.' })
  revision!: number;

  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  rules!: unknown[];
}
