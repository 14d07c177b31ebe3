// Thin on purpose: parse, configure, start. Everything else is in TourService.
Daemon.main(Array(CommandLine.arguments.dropFirst()))
