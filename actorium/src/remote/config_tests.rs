//! What each `RemoteConfig` asks of Zenoh: the defaults that would break the promise are
//! overridden in every mode (multicast scouting off, loopback unless told, the lease), and a
//! user's override comes last.

use super::*;

fn get(c: &zenoh::Config, key: &str) -> String {
    c.get_json(key).unwrap()
}

#[test]
fn every_mode_turns_multicast_off_and_listens_on_loopback_unless_told() {
    for (cfg, mode, listen) in [
        (RemoteConfig::peer(), "\"peer\"", "[\"tcp/127.0.0.1:0\"]"),
        (
            RemoteConfig::router(),
            "\"router\"",
            "[\"tcp/127.0.0.1:0\"]",
        ),
        (RemoteConfig::client(), "\"client\"", "[]"),
    ] {
        let z = cfg.lease(Duration::from_millis(1500)).to_zenoh().unwrap();
        assert_eq!(get(&z, "mode"), mode);
        assert_eq!(get(&z, "scouting/multicast/enabled"), "false", "{mode}");
        assert_eq!(get(&z, "listen/endpoints"), listen, "{mode}");
        assert_eq!(get(&z, "transport/link/tx/lease"), "1500", "{mode}");
    }
    let z = RemoteConfig::peer()
        .listen("tcp/127.0.0.1:7447")
        .connect("tcp/127.0.0.1:7448")
        .to_zenoh()
        .unwrap();
    assert_eq!(get(&z, "listen/endpoints"), "[\"tcp/127.0.0.1:7447\"]");
    assert_eq!(get(&z, "connect/endpoints"), "[\"tcp/127.0.0.1:7448\"]");
}

#[test]
fn a_user_s_zenoh_setting_comes_last_and_a_bad_one_is_refused_with_its_key() {
    let key = "transport/link/tx/queue/congestion_control/block/wait_before_close";
    let z = RemoteConfig::peer()
        .zenoh(key, "1000000")
        .to_zenoh()
        .unwrap();
    assert_eq!(get(&z, key), "1000000");
    let timeout = |v: Option<&str>| {
        let c = match v {
            Some(v) => RemoteConfig::peer().zenoh(key, v),
            None => RemoteConfig::peer(),
        };
        crate::remote::publish::close_timeout(&c.to_zenoh().unwrap())
    };
    assert_eq!(timeout(Some("1000000")), Some(Duration::from_secs(1)));
    assert_eq!(
        timeout(None),
        Some(Duration::from_secs(5)),
        "Zenoh's default"
    );
    assert_eq!(timeout(Some("-1")), None, "never given up");
    assert_eq!(timeout(Some("0")), None, "too short to tell");
    assert_eq!(timeout(Some("10000")), None, "too short to tell");
    assert_eq!(timeout(Some("50000")), None, "too short to tell");
    assert_eq!(timeout(Some("100000")), Some(Duration::from_millis(100)));
    match RemoteConfig::peer().zenoh("no/such/key", "1").to_zenoh() {
        Err(RemoteError::Config(why)) => assert!(why.contains("no/such/key"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_is_routed_also_when_a_zenoh_setting_makes_it_one() {
    let routed = |c: RemoteConfig| crate::remote::publish::routed(&c.to_zenoh().unwrap());
    assert!(routed(RemoteConfig::client()));
    assert!(!routed(RemoteConfig::peer()));
    assert!(!routed(RemoteConfig::router()));
    // The mode Zenoh is given is the one that counts.
    assert!(routed(RemoteConfig::peer().zenoh("mode", "\"client\"")));
    assert!(!routed(RemoteConfig::client().zenoh("mode", "\"peer\"")));
}
