-- The role toursd logs in as and the database it owns (docs/scale-out.md, "The database").
-- Run once, as a superuser:
--   psql "postgresql://postgres@db.internal/postgres" -v password="'the role's password'" \
--        -f config/postgresql/toursd-database.sql
-- The database is the role's: PostgreSQL 15 lets only the owner create in its public schema,
-- where toursd makes its tables. The C locale compares text byte by byte, as SQLite does, so
-- ids page in the same order on both. Tests/postgres/scaleout.sh runs this file as it is.
CREATE ROLE toursd LOGIN PASSWORD :password;
CREATE DATABASE tours OWNER toursd LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
