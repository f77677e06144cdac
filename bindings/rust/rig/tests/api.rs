//! The safe API over memory devices (MEM:n stand for GPUs), files and the
//! rigd that RIG_SERVICE names.  Rules asserted through the binding:
//! COPY-77 (copy), HACC-01 (host access in place), HACC-04 (a failing
//! access propagates), HACC-10 (whole elements), BUF-44 (views), and the
//! service's share and import (rig_service_share, rig_service_import).
use rig::{Buffer, Device, Machine, Memory, Status};

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + 7) as u8).collect()
}

#[test]
fn bytes_round_trip_through_device_memory() {
    let mem = Device::open("MEM:0").unwrap();
    let sent = pattern(1 << 20);
    let host = Buffer::of_bytes(&sent).unwrap();
    let on_mem = Buffer::create(mem, host.len(), Memory::Device).unwrap();
    let back = Buffer::create(Device::host(), host.len(), Memory::Device).unwrap();
    rig::copy(&host, &on_mem).unwrap();
    on_mem.submit_copy_to(&back, &[]).unwrap().wait().unwrap();
    assert!(back.read(|bytes| bytes == &sent[..]).unwrap(), "the bytes came back changed");
    let view = on_mem.view(4096, 16).unwrap();
    let mut sixteen = [0u8; 16];
    view.blit_to(&mut sixteen, 0).unwrap();
    assert_eq!(&sixteen[..], &sent[4096..4112]);
}

#[test]
fn host_access_lends_slices_in_place() {
    let b = Buffer::create(Device::open("MEM:1").unwrap(), 1024 * 4, Memory::Device).unwrap();
    let address = b.host_address().unwrap().as_ptr() as usize;
    b.write_as::<f32, _>(|v| {
        assert_eq!(v.as_ptr() as usize, address, "host access copies");
        for (i, x) in v.iter_mut().enumerate() {
            *x = i as f32;
        }
    })
    .unwrap();
    let sum: f64 = b.read_as::<f32, _>(|v| v.iter().map(|&x| x as f64).sum()).unwrap();
    assert_eq!(sum, 1023.0 * 1024.0 / 2.0);
    let odd = Buffer::create(Device::host(), 6, Memory::Device).unwrap();
    let error = odd.read_as::<u32, _>(|_| ()).unwrap_err();
    assert_eq!(error.status(), Status::Invalid);
}

#[test]
fn a_panic_in_host_access_reaches_the_caller_and_the_buffer_lives_on() {
    let b = Buffer::create(Device::host(), 64, Memory::Device).unwrap();
    let caught = std::panic::catch_unwind(|| b.read(|_| panic!("from the closure")));
    assert!(caught.is_err(), "the panic was lost");
    // The claim ended with the access: the memory frees.
    assert!(b.free_early("done").unwrap());
    assert_eq!(b.dead().as_deref(), Some("done"));
}

#[test]
fn errors_carry_the_message_and_numbers() {
    let mem = Device::open("MEM:0").unwrap();
    let error = Buffer::create(mem, -1, Memory::Device).unwrap_err();
    assert_eq!(error.status(), Status::Invalid);
    assert!(!error.message().is_empty());
    let a = Buffer::create(mem, 4096, Memory::Device).unwrap();
    let b = Buffer::create(mem, 2048, Memory::Device).unwrap();
    let error = rig::copy(&a, &b).unwrap_err();
    assert!(error.message().contains("4096") && error.message().contains("2048"), "{error}");
    assert!(Device::open("NOSUCH:0").is_err());
}

#[test]
fn handles_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Device>();
    send_sync::<Buffer>();
    send_sync::<Machine>();
    let b = Buffer::create(Device::open("MEM:0").unwrap(), 256, Memory::Device).unwrap();
    let filled = b.clone();
    std::thread::spawn(move || filled.fill(0x5a).unwrap()).join().unwrap();
    assert!(b.read(|bytes| bytes.iter().all(|&x| x == 0x5a)).unwrap());
}

#[test]
fn a_file_loads_into_device_memory() {
    let path = std::env::temp_dir().join(format!("rig-rust-load-{}", std::process::id()));
    let bytes = pattern(3 << 20);
    std::fs::write(&path, &bytes).unwrap();
    let loaded = rig::disk::load(path.to_str().unwrap(), Device::open("MEM:0").unwrap());
    std::fs::remove_file(&path).unwrap();
    let loaded = loaded.unwrap();
    assert_eq!(loaded.len(), bytes.len() as i64);
    assert!(loaded.read(|got| got == &bytes[..]).unwrap());
}

#[test]
fn a_buffer_saves_into_a_durable_file() {
    let path = std::env::temp_dir().join(format!("rig-rust-save-{}", std::process::id()));
    let bytes = pattern(1 << 20);
    let b = Buffer::create(Device::open("MEM:0").unwrap(), bytes.len() as i64, Memory::Device).unwrap();
    b.write(|dst| dst.copy_from_slice(&bytes)).unwrap();
    let saved = rig::disk::save(&b, path.to_str().unwrap());
    let read_only = rig::disk::open(path.to_str().unwrap(), 0, None).unwrap();
    let refused = rig::disk::sync(&read_only);
    let written = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    saved.unwrap();
    assert!(written == bytes, "the file holds other bytes than the buffer");
    assert!(refused.is_err(), "a read-only file synced");
}

#[test]
fn a_buffer_shares_through_rigd() {
    let socket = std::env::var("RIG_SERVICE").expect("RIG_SERVICE names the rigd of the test");
    let machine = Machine::connect(Some(&socket)).unwrap();
    assert!(machine.lost().is_none());
    let proxy = machine.open("MEM:0").unwrap();
    let b = Buffer::create(proxy, 1 << 16, Memory::Device).unwrap();
    let sent = pattern(1 << 16);
    b.blit_from(&sent, 0).unwrap();
    let token = b.share().unwrap();
    let imported = Buffer::import(proxy, token).unwrap();
    let mut got = vec![0u8; sent.len()];
    imported.blit_to(&mut got, 0).unwrap();
    assert_eq!(got, sent);
}
