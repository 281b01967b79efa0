#!/usr/bin/env node
// Entry point. The compile cache is enabled before anything else is imported so that every module's
// compiled (and type-stripped) code is reused across starts; the CLI itself lives in cli.ts.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./cli.ts');
