import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Rule } from '@rampart/rules-core/rules/model';
import { AdminAuth } from '../auth/admin.guard.js';
import { ApiProblems, JSON_BODY_PROBLEMS } from '../http/problem-details.js';
import {
  RULE_BODY_SCHEMA,
  RULE_SCHEMA,
  RULE_SET_SCHEMA,
  RuleListView,
  RuleSetDto,
} from './rules.dto.js';
import { RulesService } from './rules.service.js';

/** Rule validation refusals: rules-core's issues, each with the rule's index and id. */
const INVALID_RULES = {
  422: 'A rule is invalid: `issues` names each problem (rule `index`, `ruleId`, `field`, `reason`), also those JSON Schema cannot state (ranges that do not parse, regexes that do not compile, reputation lists not uploaded).',
};

@ApiTags('rules')
@AdminAuth()
@ApiProblems({ 404: 'No such site (or rule).' })
@Controller('v1/sites/:siteId/rules')
export class RulesController {
  constructor(private readonly rules: RulesService) {}

  @Get()
  @ApiOkResponse({ type: RuleListView })
  list(@Param('siteId') siteId: string): Promise<RuleListView> {
    return this.rules.list(siteId) as Promise<RuleListView>;
  }

  @Get('export')
  @ApiOkResponse({
    schema: RULE_SET_SCHEMA,
    description: 'The rule-set document, ready for import or the CLI.',
  })
  async export(@Param('siteId') siteId: string): Promise<{ rules: readonly Rule[] }> {
    return { rules: (await this.rules.list(siteId)).rules };
  }

  @Post('import')
  @ApiQuery({ name: 'mode', enum: ['replace', 'append'], required: false })
  @ApiBody({ schema: RULE_SET_SCHEMA, required: true })
  @ApiOkResponse({ type: RuleListView })
  @ApiProblems(JSON_BODY_PROBLEMS, INVALID_RULES)
  @HttpCode(200)
  import(
    @Param('siteId') siteId: string,
    @Body() body: RuleSetDto,
    @Query('mode') mode = 'replace',
  ): Promise<RuleListView> {
    if (mode !== 'replace' && mode !== 'append') {
      throw new BadRequestException('mode must be "replace" or "append"');
    }
    return this.rules.importRules(siteId, body.rules, mode) as Promise<RuleListView>;
  }

  @Get(':ruleId')
  @ApiOkResponse({ schema: RULE_SCHEMA })
  get(@Param('siteId') siteId: string, @Param('ruleId') ruleId: string): Promise<Rule> {
    return this.rules.get(siteId, ruleId);
  }

  @Post()
  @ApiBody({ schema: RULE_SCHEMA, required: true })
  @ApiCreatedResponse({ schema: RULE_SCHEMA, description: 'The stored (normalised) rule.' })
  @ApiProblems(JSON_BODY_PROBLEMS, INVALID_RULES)
  create(@Param('siteId') siteId: string, @Body() body: unknown): Promise<Rule> {
    return this.rules.create(siteId, body);
  }

  @Put(':ruleId')
  @ApiBody({ schema: RULE_BODY_SCHEMA, required: true })
  @ApiOkResponse({ schema: RULE_SCHEMA, description: 'The stored (normalised) rule.' })
  @ApiProblems(JSON_BODY_PROBLEMS, INVALID_RULES)
  replace(
    @Param('siteId') siteId: string,
    @Param('ruleId') ruleId: string,
    @Body() body: unknown,
  ): Promise<Rule> {
    return this.rules.replace(siteId, ruleId, body);
  }

  @Delete(':ruleId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The rule is gone.' })
  async remove(@Param('siteId') siteId: string, @Param('ruleId') ruleId: string): Promise<void> {
    await this.rules.remove(siteId, ruleId);
  }
}
