import { ApiProperty } from '@nestjs/swagger';
import { ruleJsonSchema, ruleSetJsonSchema } from '@rampart/rules-core/rules/json-schema';
import { IsArray } from 'class-validator';
import { schemaComponent } from '../http/openapi.js';

/** One rule, as rules-core's validator reads it (JSON Schema generated from its fields). */
export const RULE_SCHEMA = schemaComponent('Rule', ruleJsonSchema());
/** A rule in `PUT .../rules/:ruleId`, whose id the path names (so the body may leave it out). */
export const RULE_BODY_SCHEMA = schemaComponent(
  'RuleWithoutId',
  ruleJsonSchema({ idRequired: false }),
);
/** The rule-set document `{"rules": [...]}`, as `rampart snapshot build --rules` reads it. */
export const RULE_SET_SCHEMA = schemaComponent('RuleSet', ruleSetJsonSchema(RULE_SCHEMA));

/**
 * The rule-set document's outer shape, checked by the ValidationPipe (400); each rule is then
 * validated by rules-core, which names the rule, field and reason of every problem (422).
 */
export class RuleSetDto {
  @IsArray()
  rules!: unknown[];
}

export class RuleListView {
  @ApiProperty({ description: 'The site revision these rules belong to.' })
  revision!: number;

  @ApiProperty({ type: 'array', items: RULE_SCHEMA })
  rules!: unknown[];
}
