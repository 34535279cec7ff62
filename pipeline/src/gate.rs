//! Turns on shared devices: pipelines of different parameters on the same devices (a
//! Filecoin prover's PoSt and C2 pipelines) take turns per partition, higher priority first.

use std::fmt;
use std::sync::{Arc, Condvar, Mutex};

use crate::sync::lock;

/// How urgent a pipeline's partitions are on devices shared through a [`DeviceGate`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Waits while a [`Priority::High`] partition waits for the same device.
    #[default]
    Normal,
    /// Goes before every waiting `Normal` partition (WinningPoSt must finish inside its
    /// epoch while C2 queues behind it).
    High,
}

/// One turn at a time per device, shared by the pipelines given clones of it
/// ([`PipelineConfig::device_gate`](crate::PipelineConfig::device_gate)). A partition holds
/// its device's turn for its device work; a waiting high-priority partition takes the next
/// turn. Devices are numbered by their place in each pipeline's backend list, so give every
/// pipeline its backends in the same order.
#[derive(Clone, Default)]
pub struct DeviceGate {
    inner: Arc<GateInner>,
}

#[derive(Default)]
struct GateInner {
    devices: Mutex<Vec<DeviceTurns>>,
    changed: Condvar,
}

#[derive(Clone, Copy, Default)]
struct DeviceTurns {
    busy: bool,
    high_waiting: usize,
}

impl DeviceGate {
    /// A gate with every device free.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits for device `device`'s turn at `priority`; the turn ends when the returned
    /// [`Turn`] drops.
    pub fn acquire(&self, device: usize, priority: Priority) -> Turn {
        let inner = &self.inner;
        let mut devices = lock(&inner.devices);
        if devices.len() <= device {
            devices.resize(device + 1, DeviceTurns::default());
        }
        if priority == Priority::High {
            devices[device].high_waiting += 1;
        }
        loop {
            let turns = devices[device];
            let blocked = turns.busy || (priority == Priority::Normal && turns.high_waiting > 0);
            if !blocked {
                break;
            }
            devices = inner
                .changed
                .wait(devices)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        let turns = &mut devices[device];
        if priority == Priority::High {
            turns.high_waiting -= 1;
        }
        turns.busy = true;
        Turn {
            gate: Arc::clone(inner),
            device,
        }
    }

    /// Whether `other` is a clone of this gate.
    pub fn same_as(&self, other: &DeviceGate) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for DeviceGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let devices = lock(&self.inner.devices);
        let busy: Vec<bool> = devices.iter().map(|d| d.busy).collect();
        f.debug_struct("DeviceGate").field("busy", &busy).finish()
    }
}

/// A device's turn; dropping it passes the turn on.
#[must_use = "the turn ends when this drops"]
pub struct Turn {
    gate: Arc<GateInner>,
    device: usize,
}

impl Drop for Turn {
    fn drop(&mut self) {
        lock(&self.gate.devices)[self.device].busy = false;
        self.gate.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::thread;
    use std::time::Duration;

    #[test]
    fn a_waiting_high_priority_partition_goes_before_waiting_normal_ones() {
        let gate = DeviceGate::new();
        let first = gate.acquire(0, Priority::Normal);
        let (order_tx, order_rx) = channel();
        let mut threads = Vec::new();
        for (name, priority) in [("normal", Priority::Normal), ("high", Priority::High)] {
            let gate = gate.clone();
            let order_tx = order_tx.clone();
            threads.push(thread::spawn(move || {
                let _turn = gate.acquire(0, priority);
                order_tx.send(name).unwrap();
            }));
            // The normal one waits first.
            thread::sleep(Duration::from_millis(50));
        }
        drop(first);
        for t in threads {
            t.join().unwrap();
        }
        let order: Vec<_> = order_rx.try_iter().collect();
        assert_eq!(order, ["high", "normal"]);
    }

    #[test]
    fn devices_take_turns_independently() {
        let gate = DeviceGate::new();
        let _zero = gate.acquire(0, Priority::Normal);
        // Device 1 is free although device 0 is busy: this returns at once.
        let _one = gate.acquire(1, Priority::Normal);
        assert!(gate.same_as(&gate.clone()));
        assert!(!gate.same_as(&DeviceGate::new()));
    }
}
