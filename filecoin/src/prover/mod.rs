//! The proving calls: the engine and one module per Filecoin proof.

pub mod engine;
pub mod post;
pub mod seal;
pub mod update;
