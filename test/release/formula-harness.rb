# Loads a Homebrew formula without Homebrew, for formula.test.ts. A stand-in Formula class records
# the DSL as Homebrew would see it on one platform, evaluates the `service do` block, and, given a
# staging folder (what Homebrew unpacks the tarball into), runs `def install` and `test do`.
# Prints one JSON object as the last line of stdout; exits 1 when the formula's test fails.
#
#   ruby formula-harness.rb FORMULA PLATFORM [STAGE]      PLATFORM: darwin-arm64, linux-x64, ...
require "fileutils"
require "json"
require "pathname"
require "socket"
require "tmpdir"

FORMULA_PATH, PLATFORM, STAGE = ARGV
OS, ARCH = PLATFORM.split("-")

class AssertionFailed < StandardError; end

# Homebrew's Pathname#install: copy files from the current folder into this one.
class Pathname
  def install(*files)
    mkpath
    files.each { |f| FileUtils.cp(f, join(File.basename(f))) }
  end
end

class ServiceSpec
  attr_reader :spec

  def initialize(formula)
    @formula = formula
    @spec = {}
  end

  def run(command) = @spec["run"] = Array(command).map(&:to_s)
  def keep_alive(value) = @spec["keep_alive"] = value
  def log_path(path) = @spec["log_path"] = path.to_s
  def error_log_path(path) = @spec["error_log_path"] = path.to_s
  def opt_bin = @formula.opt_bin
  def var = @formula.var
end

class Formula
  class << self
    attr_reader :dsl, :service_block, :test_block, :loaded

    def inherited(subclass)
      super
      Formula.instance_variable_set(:@loaded, subclass)
      subclass.instance_variable_set(:@dsl, { "url" => [], "sha256" => [] })
    end

    def desc(value) = @dsl["desc"] = value
    def homepage(value) = @dsl["homepage"] = value
    def license(value) = @dsl["license"] = value
    def url(value) = @dsl["url"] << value
    def sha256(value) = @dsl["sha256"] << value
    def version(value) = @dsl["version"] = value
    def on_macos = (yield if OS == "darwin")
    def on_linux = (yield if OS == "linux")
    def on_arm = (yield if ARCH == "arm64")
    def on_intel = (yield if ARCH == "x64")
    def service(&block) = @service_block = block
    def test(&block) = @test_block = block
  end

  def initialize(prefix, testpath)
    @prefix = Pathname(prefix)
    @testpath = Pathname(testpath)
  end

  attr_reader :testpath

  def version = self.class.dsl["version"]
  def bin = @prefix/"bin"
  def opt_bin = @prefix/"opt/bin"
  def var = @prefix/"var"

  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end

  def shell_output(cmd, result = 0)
    out = `#{cmd}`
    status = $?.exitstatus
    assert_equal(result, status, "#{cmd} exited #{status}") unless result.nil?
    out
  end

  def quiet_system(*args) = system(*args, out: File::NULL, err: File::NULL)

  def assert(value, message = "assertion failed")
    raise AssertionFailed, message unless value
  end

  def assert_match(pattern, text)
    ok = pattern.is_a?(Regexp) ? pattern.match?(text) : text.include?(pattern)
    assert(ok, "expected #{text.inspect} to match #{pattern.inspect}")
  end

  def assert_equal(expected, actual, message = nil)
    assert(expected == actual, message || "expected #{expected.inspect}, got #{actual.inspect}")
  end
end

load FORMULA_PATH
klass = Formula.loaded
report = { "class" => klass.name }.merge(klass.dsl)
Dir.mktmpdir("airlock-formula-") do |tmp|
  formula = klass.new(File.join(tmp, "prefix"), File.join(tmp, "testpath"))
  report["opt_bin"] = formula.opt_bin.to_s
  report["var"] = formula.var.to_s
  if klass.service_block
    service = ServiceSpec.new(formula)
    service.instance_exec(&klass.service_block)
    report["service"] = service.spec
  end
  report["caveats"] = formula.caveats if formula.respond_to?(:caveats)
  report["has_test"] = !klass.test_block.nil?
  if STAGE
    Dir.chdir(STAGE) { formula.install }
    report["installed"] = Dir.children(formula.bin.to_s).sort
    FileUtils.mkdir_p(formula.testpath)
    begin
      Dir.chdir(formula.testpath) { formula.instance_exec(&klass.test_block) }
      report["test"] = "passed"
    rescue AssertionFailed => e
      report["test"] = "failed: #{e.message}"
    end
  end
end
puts JSON.generate(report)
exit(report.fetch("test", "passed") == "passed" ? 0 : 1)
