//! The planner's unit tests: footprints, worker counts, H modes and streamed plans.

use super::*;

fn lengths(log_n: u32) -> QueryLengths {
    let n = 1usize << log_n;
    QueryLengths {
        h: n - 1,
        l: n / 2,
        a: n / 2,
        b_g1: n / 2,
        b_g2: n / 2,
    }
}

fn input(log_n: u32, workers: usize, host: u64, device: u64) -> PlanInput {
    PlanInput {
        footprint: PartitionFootprint::new(&lengths(log_n), 3),
        asked_workers: workers,
        host_budget: host,
        fixed_host_bytes: 1000,
        device_budget: device,
        query_device_bytes: [1000; 5],
        point_device_bytes: [96, 192],
        residency: ResidencyChoice::Resident,
        pass_partitions: None,
        pass_h_group: None,
        stream_batch_len: None,
        devices: 1,
        h_mode: HModeChoice::Auto,
        device_memory_is_host: false,
        partition_extra_host_bytes: 0,
        msm_scratch_bytes: 0,
    }
}

#[test]
fn footprint_is_the_worst_case_of_the_compact_assignment() {
    let lengths = lengths(10);
    let fp = PartitionFootprint::new(&lengths, 3);
    assert_eq!(fp.domain_size, 1024);
    let capacity = Capacity::for_queries(&lengths);
    assert_eq!(
        fp.worst_case_host_bytes(),
        ProvingAssignment::max_host_bytes(capacity, 3)
    );
    // At least the raw a, b and witness: dense values are stored raw.
    assert!(fp.ab_bytes >= 2 * 1024 * 32, "{fp:?}");
    assert!(fp.witness_bytes >= (512 + 3) * 32, "{fp:?}");
    assert_eq!(fp.in_memory_device_bytes, 4 * 1024 * 32);
}

#[test]
fn plans_every_worker_and_counts_the_worst_cases_that_fit() {
    let per = PartitionFootprint::new(&lengths(10), 3).worst_case_host_bytes();
    let plan = MemoryPlan::new(&input(10, 16, 1000 + 3 * per + per / 2, 1 << 30)).unwrap();
    assert_eq!((plan.asked_workers, plan.workers), (16, 16));
    assert_eq!(plan.worst_case_partitions, 3);
    assert_eq!(plan.partition_host_bytes, per);
    assert_eq!(plan.h_mode, HMode::InMemory);
    assert!(matches!(
        MemoryPlan::new(&input(10, 4, 1000 + per - 1, 1 << 30)),
        Err(PipelineError::HostBudgetTooSmall { .. })
    ));
}

/// A device in host memory draws its parameters and partition working set from the
/// host budget: a budget that would count the same RAM twice is refused.
#[test]
fn devices_in_host_memory_draw_on_the_host_budget() {
    let per = PartitionFootprint::new(&lengths(10), 3).worst_case_host_bytes();
    let mut shared = input(10, 4, 1000 + per + 100, 1 << 30);
    let apart = MemoryPlan::new(&shared).unwrap();
    assert_eq!(apart.fixed_host_bytes, 1000);
    shared.device_memory_is_host = true;
    assert!(matches!(
        MemoryPlan::new(&shared),
        Err(PipelineError::HostBudgetTooSmall { .. })
    ));
    shared.host_budget += 5000 + apart.partition_device_bytes;
    let plan = MemoryPlan::new(&shared).unwrap();
    assert_eq!(
        plan.fixed_host_bytes,
        1000 + 5000 + plan.partition_device_bytes,
        "{plan:?}"
    );
}

#[test]
fn msm_scratch_is_reserved_next_to_h() {
    let n = 1u64 << 12;
    let mut with_scratch = input(12, 4, 1 << 40, 1 << 30);
    with_scratch.msm_scratch_bytes = 7 * n * 32;
    let plan = MemoryPlan::new(&with_scratch).unwrap();
    assert_eq!(plan.h_mode, HMode::InMemory);
    assert_eq!(
        plan.partition_device_bytes,
        8 * n * 32,
        "h plus the scratch"
    );
    // Four-step H leaves h on the host: the scratch alone.
    with_scratch.h_mode = HModeChoice::Streaming {
        device_budget_bytes: n * 32,
    };
    let plan = MemoryPlan::new(&with_scratch).unwrap();
    assert_eq!(plan.partition_device_bytes, 7 * n * 32);
    // A budget that holds H but not the scratch is refused, not planned.
    with_scratch.device_budget = 5000 + 6 * n * 32;
    assert!(matches!(
        MemoryPlan::new(&with_scratch),
        Err(PipelineError::DeviceBudgetTooSmall { .. })
    ));
}

#[test]
fn streams_when_the_in_memory_working_set_does_not_fit() {
    let n = 1u64 << 12;
    // Parameters 5000 bytes; in memory needs 4 vectors; give it 2.
    let plan = MemoryPlan::new(&input(12, 4, 1 << 40, 5000 + 2 * n * 32)).unwrap();
    let HMode::Streaming {
        device_budget_bytes,
    } = plan.h_mode
    else {
        panic!("expected streaming, got {:?}", plan.h_mode)
    };
    assert_eq!(device_budget_bytes, 2 * n * 32);
    assert!(plan.partition_device_bytes <= device_budget_bytes);
    // Two vectors fit: the two-vector scheme holds a and b decoded whole, per device.
    assert_eq!(plan.fixed_host_bytes, 1000 + 2 * n * 32, "{plan:?}");
    // With 1.5 vectors, four-step: also one streaming intermediate (a vector and a
    // chunk) per device.
    let plan = MemoryPlan::new(&input(12, 4, 1 << 40, 5000 + 3 * n * 16)).unwrap();
    assert!(matches!(plan.h_mode, HMode::Streaming { .. }), "{plan:?}");
    assert!(plan.fixed_host_bytes >= 1000 + 3 * n * 32, "{plan:?}");
    assert!(matches!(
        MemoryPlan::new(&input(12, 4, 1 << 40, 4000)),
        Err(PipelineError::ParametersDoNotFit { .. })
    ));
    assert!(matches!(
        MemoryPlan::new(&input(12, 4, 1 << 40, 5000 + 64 * 32)),
        Err(PipelineError::DeviceBudgetTooSmall { .. })
    ));
    let mut forced = input(12, 4, 1 << 40, 1 << 30);
    forced.h_mode = HModeChoice::InMemory;
    forced.device_budget = 5000 + 3 * n * 32;
    assert!(
        MemoryPlan::new(&forced).is_err(),
        "in memory needs 4 vectors"
    );
}

/// Parameters over the device budget stream: the largest queries that fit stay, a
/// pass's h vectors are held on the host only where h streams (a group of them, at most
/// half of what the host budget leaves), and `Resident` refuses instead.
#[test]
fn plans_streamed_parameters_where_they_do_not_fit() {
    let n = 1u64 << 12;
    let vector = n * 32;
    let mut big = input(12, 8, 1 << 40, 0);
    big.query_device_bytes = [
        40 * vector,
        30 * vector,
        30 * vector,
        10 * vector,
        20 * vector,
    ];
    big.device_budget = 64 * vector;
    assert!(matches!(
        MemoryPlan::new(&big),
        Err(PipelineError::ParametersDoNotFit { .. })
    ));
    big.residency = ResidencyChoice::Auto;
    let plan = MemoryPlan::new(&big).unwrap();
    assert!(!plan.residency.is_all(), "{plan:?}");
    assert!(
        plan.residency.h,
        "the largest query that fits stays: {plan:?}"
    );
    assert_eq!(
        plan.params_device_bytes,
        plan.residency.resident_bytes(big.query_device_bytes)
    );
    assert!(plan.params_device_bytes + plan.partition_device_bytes <= big.device_budget);
    assert_eq!(plan.pass_partitions, 8, "{plan:?}");
    assert_eq!(
        plan.fixed_host_bytes, 1000,
        "h resident: no h vectors on the host"
    );
    // Every query streamed: a group's h vectors are fixed host bytes, their number
    // bounded by half the host budget left; the pass keeps the partitions the device
    // holds.
    let per = big.footprint.worst_case_host_bytes();
    big.residency = ResidencyChoice::Fixed(Residency::NONE);
    big.host_budget = 1000 + per + 6 * vector;
    let plan = MemoryPlan::new(&big).unwrap();
    assert_eq!(plan.params_device_bytes, 0);
    assert_eq!(plan.pass_h_group, 3, "{plan:?}");
    assert_eq!(plan.pass_partitions, 8, "{plan:?}");
    assert_eq!(plan.fixed_host_bytes, 1000 + 3 * vector, "{plan:?}");
    assert!(plan.stream_batch_len.is_some_and(|b| b >= MIN_STREAM_BATCH));
}

/// Where no query fits: H stays in memory when its working set in a pass (a, b and c)
/// fits the budget, and the batches take the device left beside the resident queries
/// (a pass and H are never on the device at once), longer where the host allows a smaller
/// h group, with as many partitions a pass as fit at that length.
#[test]
fn streamed_plans_keep_h_in_memory_and_size_batches_by_the_device_left() {
    let n = 1u64 << 24;
    let vector = n * 32;
    let mut big = input(24, 8, 1 << 50, 6 * vector);
    big.query_device_bytes = [10 * vector; 5];
    big.residency = ResidencyChoice::Auto;
    let plan = MemoryPlan::new(&big).unwrap();
    assert_eq!(plan.h_mode, HMode::InMemory, "{plan:?}");
    assert_eq!(plan.residency, Residency::NONE, "{plan:?}");
    assert_eq!(plan.pass_partitions, 8, "{plan:?}");
    // A pass holds 3 batches of G2 bases (192 bytes) and 2 chunks of 8 partitions'
    // scalars: 1088 bytes a scalar; 2^21 of them in 6 vectors (a quarter of the
    // budget would allow 2^19).
    assert_eq!(plan.stream_batch_len, Some(1 << 21), "{plan:?}");
    assert!(plan.partition_device_bytes <= big.device_budget, "{plan:?}");
    // Host room for two partitions' h vectors: 704 bytes a scalar, 2^22 of them; then
    // three partitions a pass (768 bytes a scalar) fit the 6 vectors.
    big.host_budget = 1000 + big.footprint.worst_case_host_bytes() + 4 * vector;
    let plan = MemoryPlan::new(&big).unwrap();
    assert_eq!(plan.pass_h_group, 2, "{plan:?}");
    assert_eq!(plan.pass_partitions, 3, "{plan:?}");
    assert_eq!(plan.stream_batch_len, Some(1 << 22), "{plan:?}");
    assert!(plan.partition_device_bytes <= big.device_budget, "{plan:?}");
    // H's 3 vectors and a compact upload's temporaries do not fit 3 vectors: streaming
    // in half the budget.
    big.device_budget = 3 * vector;
    big.host_budget = 1 << 50;
    let plan = MemoryPlan::new(&big).unwrap();
    assert!(matches!(plan.h_mode, HMode::Streaming { .. }), "{plan:?}");
}

/// The plans of 10 x 2^27 bits partitions on an H100's own budget (72 GiB) and on 24
/// and 16 GiB, with the queries' and the MSM scratch's device bytes an H100 measured. 72
/// GiB keeps h, l and b_g2 resident with batches of 2^23, as it ran; 24 and 16 GiB keep
/// H in memory and take batches of 2^24 for the host's h group of 4, then 12 and 4
/// partitions a pass; asked for h's MSMs from the device, no h group and batches sized
/// beside h.
#[test]
fn plans_of_2_27_on_an_h100_and_smaller_cards() {
    let n = 1u64 << 27;
    let vector = n * 32;
    let gib = |g: u64| g << 30;
    let most = n * 98 / 100;
    let mut plan_input = input(27, 16, 1 << 50, gib(72));
    plan_input.query_device_bytes = [(n - 1) * 96, n * 96, most * 96, most * 96, most * 192];
    plan_input.msm_scratch_bytes = 2 * 10_339_324_904;
    plan_input.residency = ResidencyChoice::Auto;
    let plan = MemoryPlan::new(&plan_input).unwrap();
    let kept = Residency {
        h: true,
        l: true,
        b_g2: true,
        ..Residency::NONE
    };
    assert_eq!(plan.residency, kept, "{plan:?}");
    assert_eq!(plan.stream_batch_len, Some(1 << 23), "{plan:?}");
    assert_eq!(plan.h_mode, HMode::InMemory, "{plan:?}");
    // Host room for four partitions' h vectors, as the benchmark left it.
    let worst = plan_input.footprint.worst_case_host_bytes();
    plan_input.host_budget = 1000 + worst + 8 * vector;
    // The host's groups, asked for: h's vectors four at a time.
    plan_input.pass_h_group = Some(4);
    for (card, k) in [(24, 12), (16, 4)] {
        plan_input.device_budget = gib(card);
        let plan = MemoryPlan::new(&plan_input).unwrap();
        assert_eq!(plan.residency, Residency::NONE, "{card} GiB: {plan:?}");
        assert_eq!(plan.h_mode, HMode::InMemory, "{card} GiB: {plan:?}");
        assert_eq!(plan.pass_h_group, 4, "{card} GiB: {plan:?}");
        assert_eq!(plan.pass_partitions, k, "{card} GiB: {plan:?}");
        assert_eq!(plan.stream_batch_len, Some(1 << 24), "{card} GiB: {plan:?}");
        assert!(
            plan.partition_device_bytes <= gib(card),
            "{card} GiB: {plan:?}"
        );
    }
    // h's MSM from the device after each H, by default (a partition then streams h's
    // bases and a twelfth or sixteenth of the rest: under a quarter of the parameters)
    // and asked for: no h vector on the host, the batches sized beside h (2^23 at
    // 16 GiB), then as many partitions as fit.
    for asked in [None, Some(0)] {
        plan_input.pass_h_group = asked;
        for (card, k, batch) in [(24, 12, 1 << 24), (16, 16, 1 << 23)] {
            plan_input.device_budget = gib(card);
            let plan = MemoryPlan::new(&plan_input).unwrap();
            let at = format!("{card} GiB, {asked:?}: {plan:?}");
            assert_eq!(plan.pass_h_group, 0, "{at}");
            assert_eq!(plan.fixed_host_bytes, 1000, "{at}");
            assert_eq!(plan.pass_partitions, k, "{at}");
            assert_eq!(plan.stream_batch_len, Some(batch), "{at}");
            assert!(
                plan.partition_device_bytes >= vector + batch as u64 * (3 * 192 + 64),
                "{at}: h beside a batch"
            );
            assert!(plan.partition_device_bytes <= gib(card), "{at}");
        }
    }
    // Passes of at most 3 would leave a partition streaming h's bases and a third of the
    // rest (0.45 of the parameters): by default the host's groups, unless asked.
    plan_input.pass_partitions = Some(3);
    plan_input.device_budget = gib(24);
    for (asked, group) in [(None, 3), (Some(0), 0)] {
        plan_input.pass_h_group = asked;
        let plan = MemoryPlan::new(&plan_input).unwrap();
        assert_eq!(plan.pass_h_group, group, "{asked:?}: {plan:?}");
        assert_eq!(plan.pass_partitions, 3, "{asked:?}: {plan:?}");
    }
    plan_input.pass_partitions = None;
    plan_input.pass_h_group = None;
    // Where H leaves h on the host (four-step streaming H in 5 GiB), the host's groups.
    plan_input.device_budget = gib(5);
    let plan = MemoryPlan::new(&plan_input).unwrap();
    assert!(
        matches!(plan.h_mode, HMode::Streaming { .. }),
        "5 GiB: {plan:?}"
    );
    assert_eq!(plan.pass_h_group, 4, "5 GiB: {plan:?}");
}
