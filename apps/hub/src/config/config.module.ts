import { Global, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { HUB_CONFIG, HubEnvironment, hubConfigFrom, validateEnvironment } from './hub-config.js';

/** Validated environment (see hub-config.ts) exposed as a typed `HubConfig` under HUB_CONFIG. */
@Global()
@Module({
  imports: [
    ConfigModule.forRoot({
      isGlobal: true,
      cache: true,
      ignoreEnvFile: true,
      validate: validateEnvironment,
    }),
  ],
  providers: [
    {
      provide: HUB_CONFIG,
      inject: [ConfigService],
      // The validated (defaulted, converted) values, read back one key at a time.
      useFactory: (config: ConfigService<HubEnvironment, true>) =>
        hubConfigFrom(
          Object.fromEntries(
            Object.keys(new HubEnvironment()).map((key) => [
              key,
              config.get(key as keyof HubEnvironment),
            ]),
          ) as unknown as HubEnvironment,
        ),
    },
  ],
  exports: [HUB_CONFIG],
})
export class HubConfigModule {}
