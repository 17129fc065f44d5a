# daemon_servers_test.sh against Ceph RGW instead of s3rver: the same daemon, HTTP origin and
# checks, into a real S3 implementation that checks signatures and payload hashes.
export FDL_TEST_S3_SERVER=rgw
source "$(dirname "$0")/daemon_servers_test.sh"
