import { Global, Module } from '@nestjs/common';
import { AdminGuard } from './admin.guard.js';
import { FailureLimiter } from './failure-limiter.js';
import { SiteKeyGuard } from './site-key.guard.js';

@Global()
@Module({
  providers: [FailureLimiter, AdminGuard, SiteKeyGuard],
  exports: [FailureLimiter, AdminGuard, SiteKeyGuard],
})
export class AuthModule {}
