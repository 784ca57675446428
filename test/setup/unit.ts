import 'reflect-metadata';

process.env.APP_ENV = 'development';
process.env.LOG_LEVEL = 'silent';
