/**
 * The OpenAPI document at `/docs/openapi.json`: Nest's document from the controllers'
 * decorators, plus the schemas that validators generate (a rule, a report batch) as named
 * components, so a body the hub checks with its own code is described by the same definitions
 * that code reads.
 */
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

const components = new Map<string, object>();

/**
 * Registers `schema` as component `name` and returns a reference to it, for `@ApiBody({ schema
 * })`, `@ApiProperty({ items })` or a response: `schemaComponent('Rule', ruleJsonSchema())`.
 */
export function schemaComponent(name: string, schema: object): { $ref: string } {
  components.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Rampart hub')
      .setDescription(
        'Sites, rules, datasets, snapshot builds and distribution. Every error is an RFC 9457 problem (`application/problem+json`, schema `ProblemDetails`).',
      )
      .setVersion('1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'HUB_ADMIN_TOKEN' }, 'admin')
      .addBearerAuth(
        { type: 'http', scheme: 'bearer', description: 'a site key (rk_...)' },
        'site-key',
      )
      .addCookieAuth(
        'rampart_session',
        {
          type: 'apiKey',
          in: 'cookie',
          description:
            'a dashboard session (POST /v1/session); writes also need its X-CSRF-Token header',
        },
        'session',
      )
      .build(),
  );
  const schemas: Record<string, object> = { ...document.components?.schemas };
  for (const [name, schema] of components) schemas[name] = schema;
  // DTO bodies are closed: the ValidationPipe refuses unknown properties (forbidNonWhitelisted).
  for (const name of bodyComponents(document)) {
    if (components.has(name)) continue; // a validator's own schema says it already
    const schema = schemas[name] as { additionalProperties?: unknown } | undefined;
    if (schema && schema.additionalProperties === undefined) schema.additionalProperties = false;
  }
  document.components = { ...document.components, schemas };
  return document;
}

/** Components that are request bodies. */
function bodyComponents(document: OpenAPIObject): Set<string> {
  const names = new Set<string>();
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations) as {
      requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
    }[]) {
      for (const media of Object.values(operation.requestBody?.content ?? {})) {
        const ref = media.schema?.$ref;
        if (ref?.startsWith('#/components/schemas/')) names.add(ref.slice(21));
      }
    }
  }
  return names;
}
