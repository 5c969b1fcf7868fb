//! Artifact stores side by side, same run: a `BucketStore` on a local S3-compatible server
//! (moto, started here from `interop/.venv-s3`, which `interop/setup.sh` installs) next to a
//! `DirStore` on local disk, with the floor under the bucket's figures: the same bytes uploaded
//! by `object_store` alone, no toolsmith in between.
//!
//! For each: write 1 GiB of log lines through a writer (the default 256 MiB cap keeps its head
//! and tail) and commit; read the last page from a fresh handle (nothing cached: what another
//! replica does); read 100 pages at random lines. Run: `cargo bench --bench artifact_store`.

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolsmith::DirStore;
use toolsmith::artifacts::object_store::path::Path;
use toolsmith::artifacts::object_store::{ObjectStoreExt as _, PutPayload, WriteMultipart};
use toolsmith::artifacts::{ArtifactId, ArtifactStore, BucketStore, PageRequest};
use toolsmith_workspace::s3::S3Server;

const GIB: usize = 1 << 30;
const PAGE: usize = 16 * 1024;

fn chunk(first_line: u64) -> (Vec<u8>, u64) {
    let mut chunk = Vec::with_capacity(1 << 20);
    let mut line = first_line;
    while chunk.len() < 1 << 20 {
        writeln!(chunk, "line {line:>20} of a gigabyte of build output .....").unwrap();
        line += 1;
    }
    (chunk, line)
}

struct Figures {
    id: ArtifactId,
    write: Duration,
    last_page: Duration,
    random_pages: Duration,
}

fn measure(
    writer_store: &dyn ArtifactStore,
    fresh: impl Fn() -> Arc<dyn ArtifactStore>,
    chunks: &[Vec<u8>],
) -> Figures {
    let started = Instant::now();
    let mut writer = writer_store.begin().unwrap();
    for _ in 0..GIB / (1 << 20) / chunks.len() {
        for chunk in chunks {
            writer.write_all(chunk).unwrap();
        }
    }
    let id = writer.commit().unwrap();
    let write = started.elapsed();

    let reader = fresh();
    let request = |offset| PageRequest {
        offset,
        char_offset: 0,
        limit: None,
        max_bytes: PAGE,
    };
    let started = Instant::now();
    let probe = reader.read_page(&id, request(usize::MAX / 2)).unwrap();
    let last = reader
        .read_page(&id, request(probe.total_lines - 1))
        .unwrap();
    let last_page = started.elapsed();
    assert_eq!(last.lines, 1);

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let started = Instant::now();
    for _ in 0..100 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let offset = (seed % probe.total_lines as u64) as usize;
        let page = reader.read_page(&id, request(offset)).unwrap();
        assert!(page.lines > 0);
    }
    Figures {
        id,
        write,
        last_page,
        random_pages: started.elapsed(),
    }
}

fn main() {
    let server = S3Server::start();
    let objects = server.store("bench");
    // 16 distinct chunks of 1 MiB, written over and over.
    let mut chunks = Vec::new();
    let mut line = 0;
    for _ in 0..16 {
        let (chunk, next) = chunk(line);
        chunks.push(chunk);
        line = next;
    }

    let dir = tempfile::tempdir().unwrap();
    let dir_store = DirStore::open(dir.path().join("artifacts")).unwrap();
    let on_disk = measure(&dir_store, || Arc::new(dir_store.clone()), &chunks);

    let prefix = Path::from(format!("bench/{}", ArtifactId::generate().unwrap()));
    let open = || {
        BucketStore::builder(Arc::clone(&objects), prefix.clone(), "s3://bench")
            .open()
            .unwrap()
    };
    let bucket = open();
    let in_bucket = measure(&bucket, || Arc::new(open()), &chunks);

    // The floor: what the bucket store uploads (the 256 MiB it keeps, in parts of 5 MiB, one in
    // flight while the next is made), by object_store alone, from memory.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let started = Instant::now();
    runtime.block_on(async {
        let upload = objects
            .put_multipart(&Path::from("bench/floor"))
            .await
            .unwrap();
        let mut multipart = WriteMultipart::new_with_chunk_size(upload, 5 << 20);
        for _ in 0..(256 << 20) / (1 << 20) / chunks.len() {
            for chunk in &chunks {
                multipart.wait_for_capacity(1).await.unwrap();
                multipart.write(chunk);
            }
        }
        multipart.finish().await.unwrap();
        objects
            .put(
                &Path::from("bench/floor.index"),
                PutPayload::from(vec![0u8; 400_000]),
            )
            .await
            .unwrap();
    });
    let floor = started.elapsed();
    // And under its reads: 100 ranged GETs of a page's window (a mark's spacing and a page) at
    // random places of the object the bucket store wrote, by object_store alone.
    let text = prefix.clone().join(format!("{}.txt", in_bucket.id));
    let size = runtime.block_on(objects.head(&text)).unwrap().size;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let started = Instant::now();
    runtime.block_on(async {
        for _ in 0..100 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let start = seed % (size - (64 << 10) - PAGE as u64);
            let window = start..start + (64 << 10) + PAGE as u64;
            objects.get_range(&text, window).await.unwrap();
        }
    });
    let read_floor = started.elapsed();

    let mib_s = |took: Duration| 1024.0 / took.as_secs_f64();
    println!("artifact stores, same run: 1 GiB written (256 MiB kept), then read");
    println!(
        "write 1 GiB + commit:  DirStore {:>8.2} s ({:>6.0} MiB/s) | BucketStore {:>8.2} s ({:>6.0} MiB/s) | ratio {:.2}x DirStore's throughput",
        on_disk.write.as_secs_f64(),
        mib_s(on_disk.write),
        in_bucket.write.as_secs_f64(),
        mib_s(in_bucket.write),
        on_disk.write.as_secs_f64() / in_bucket.write.as_secs_f64()
    );
    println!(
        "floor: the same 256 MiB uploaded by object_store alone: {:.2} s; the bucket store's write is {:.2}x it",
        floor.as_secs_f64(),
        in_bucket.write.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "last page, fresh handle: DirStore {:>8.2} ms | BucketStore {:>8.2} ms",
        on_disk.last_page.as_secs_f64() * 1e3,
        in_bucket.last_page.as_secs_f64() * 1e3
    );
    println!(
        "100 random pages:       DirStore {:>8.2} ms | BucketStore {:>8.2} ms | floor: 100 ranged GETs of 80 KiB by object_store alone {:>8.2} ms",
        on_disk.random_pages.as_secs_f64() * 1e3,
        in_bucket.random_pages.as_secs_f64() * 1e3,
        read_floor.as_secs_f64() * 1e3
    );
}
