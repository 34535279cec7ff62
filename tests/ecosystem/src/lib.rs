//! Nothing but tests (`tests/`): circuits from the Filecoin ecosystem proved by sluice.
