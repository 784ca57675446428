import type { Redis } from 'ioredis';
import type { SpeechEngines } from '#libs/captions';
import type { AppConfig } from '#libs/core';
import type { Orm } from '#libs/db';
import type { StorageDriver } from '#libs/storage';

/** An injection token that names the type of what it provides (ServicesModule's factories read it). */
export type Token<T> = (symbol | string) & { readonly provides?: T };

/** The process's configuration (loadConfig). */
export const APP_CONFIG = Symbol('APP_CONFIG') as Token<AppConfig>;
/** The database, opened and migrated. */
export const ORM = Symbol('ORM') as Token<Orm>;
/** The process's Redis connection (connected on its first command). */
export const REDIS = Symbol('REDIS') as Token<Redis>;
/** The configured `StorageDriver` (libs/storage). */
export const STORAGE = Symbol('STORAGE') as Token<StorageDriver>;
/** The speech engines: the providers' adapters and the offline engine (libs/captions). */
export const SPEECH_ENGINES = Symbol('SPEECH_ENGINES') as Token<SpeechEngines>;
