//! An S3-compatible server on loopback for the tests and benchmarks of bucket stores: moto's
//! server mode, installed pinned into `interop/.venv-s3` by `interop/setup.sh` (the README's test
//! command runs it), started here on a free port and stopped when dropped, or when the test
//! process ends (the server exits when its stdin, a pipe from the test, closes).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use toolsmith::artifacts::object_store::ObjectStore;
use toolsmith::artifacts::object_store::aws::AmazonS3Builder;

/// The credentials and region the tests give; moto accepts any.
pub const ACCESS_KEY: &str = "toolsmith-test";
/// See [`ACCESS_KEY`].
pub const SECRET_KEY: &str = "toolsmith-test-secret";
/// See [`ACCESS_KEY`].
pub const REGION: &str = "us-east-1";

/// A running moto server.
#[derive(Debug)]
pub struct S3Server {
    addr: SocketAddr,
    child: Child,
}

/// The Python of `interop/.venv-s3`, where setup installs moto.
fn python() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop/.venv-s3/bin/python")
}

impl S3Server {
    /// Starts a server on a free loopback port and waits until it answers.
    ///
    /// # Panics
    ///
    /// When moto is not installed (run `bash interop/setup.sh`, as the README's test command
    /// does) or does not answer within 60 seconds.
    pub fn start() -> Self {
        let python = python();
        assert!(
            python.exists(),
            "the S3 test server is not installed: run `bash interop/setup.sh` (the README's test \
             command, `bash scripts/test.sh`, runs it)"
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|addr| addr.port())
            .expect("a free loopback port");
        // The server reads its stdin, a pipe from this process, and exits when it closes: when
        // the server is dropped, or when this process ends however it ends.
        let watch = format!(
            "import os, sys, threading\n\
             threading.Thread(target=lambda: (sys.stdin.buffer.read(), os._exit(0)), daemon=True).start()\n\
             from moto.server import main\n\
             main(['-H', '127.0.0.1', '-p', '{port}'])\n"
        );
        let child = Command::new(python)
            .args(["-c", &watch])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto starts");
        let server = S3Server {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.request("GET", "/").is_none() {
            assert!(Instant::now() < deadline, "moto did not answer in 60 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The server shared by the tests of this process, started by the first that asks.
    pub fn shared() -> &'static S3Server {
        static SHARED: OnceLock<S3Server> = OnceLock::new();
        SHARED.get_or_init(S3Server::start)
    }

    /// Its endpoint, `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Creates a bucket (an existing one is kept).
    ///
    /// # Panics
    ///
    /// When the server refuses.
    pub fn create_bucket(&self, name: &str) {
        let status = self
            .request("PUT", &format!("/{name}"))
            .expect("moto answers");
        assert!(
            status == 200 || status == 409,
            "creating bucket {name}: HTTP {status}"
        );
    }

    /// A store over `bucket` (created if need be), as the bucket store's tests use it.
    ///
    /// # Panics
    ///
    /// When the store cannot be built.
    pub fn store(&self, bucket: &str) -> Arc<dyn ObjectStore> {
        self.create_bucket(bucket);
        Arc::new(
            AmazonS3Builder::new()
                .with_endpoint(self.endpoint())
                .with_allow_http(true)
                .with_bucket_name(bucket)
                .with_access_key_id(ACCESS_KEY)
                .with_secret_access_key(SECRET_KEY)
                .with_region(REGION)
                .build()
                .expect("an S3 store over moto"),
        )
    }

    /// The environment a `toolsmith` process needs to reach this server (`AWS_ENDPOINT_URL`,
    /// `AWS_ALLOW_HTTP`, the keys and the region).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_owned()),
            ("AWS_REGION", REGION.to_owned()),
        ]
    }

    /// One plain HTTP/1.1 request with no body; its status, or `None` when nothing answers.
    fn request(&self, method: &str, path: &str) -> Option<u16> {
        let mut stream = TcpStream::connect_timeout(&self.addr, Duration::from_secs(2)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .ok()?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.addr
        )
        .ok()?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).ok()?;
        std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
