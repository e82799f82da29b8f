<?php
/*
 * A stand-in for the official USAePay PHP SDK 2.x when its code is not at hand (it is not published on npm or
 * Debian, Packagist is not reachable from CI, and fetched code is never committed). Written from a reading of
 * the SDK (usaepay/usaepay-php 2.1.6, readable as commit 81a9fee of github.com/bam-bam-bigelow/epay-sdk-php);
 * it reproduces, and only reproduces, what a caller of these classes sees on the wire and in return values:
 *
 *   API::setAuthentication   lib/API.php lines 38-44: seed = substr(sha256(rand()), 10, 25),
 *                            password "<key>:s2/<seed>/<sha256(key . seed . pin)>" (HTTP basic auth)
 *   API::setSubdomain, setEndpointKey, setTimeOut   lib/API.php lines 50-61
 *   API::runCall             lib/API.php lines 124-202: body json_encode($data) or '[]' when $data is empty,
 *                            query "?k=v&k=v" appended as is, URL https://<subdomain>.usaepay.com/api/<endpoint
 *                            key><path>, header "Content-type: application/json", POST with the body, GET with
 *                            none, DELETE and PUT (lines 159-169) as a POST with CUSTOMREQUEST and the body ('[]'
 *                            for a DELETE without data); the answer json_decode()d to objects; an object with
 *                            `error` and no `result` (or result "error") throws ueException(error, errorcode);
 *                            otherwise it is returned
 *   Transactions::post       lib/Transactions.php (post): runCall('post', '/transactions', $Data)
 *   Customers::get           lib/Customers.php lines 11-40: limit/offset as query, custkey appended to the path
 *   Customers::post, delete, put   lib/Customers.php lines 41-120: post sends $Data to /customers; delete and put
 *                            require custkey, take it out of $Data and append it to the path
 *   Customers\Payment_methods::get   lib/Customers/Payment_methods.php lines 11-43: custkey required,
 *                            path /customers/<custkey>/payment_methods[/<paymethod_key>]
 *   Customers\Payment_methods::post, delete, put   same file lines 43-130: custkey (and paymethod_key for delete
 *                            and put) required and taken out of $Data, the rest sent as the body (so a list of
 *                            methods beside custkey goes out as a JSON array)
 *   Exception\*              lib/Exception/{ueException,SDKException,CurlException}.php: plain \Exception subclasses
 *
 * When the real SDK is available, point USAEPAY_PHP_SDK_DIR at its checkout and the test runs it instead.
 */

namespace USAePay\Exception {
	class ueException extends \Exception {}
	class SDKException extends \Exception {}
	class CurlException extends \Exception {}
}

namespace USAePay {
	class API {
		static $timeout = '45';
		static $endpoint_key = 'v2';
		static $subdomain = 'secure';
		static $password = false;

		static function setAuthentication($api_key, $api_pin) {
			$seed = substr(hash('sha256', rand()), 10, 25);
			self::$password = "$api_key:s2/$seed/" . hash('sha256', $api_key . $seed . $api_pin);
		}
		static function setTimeOut($timeout_value) {
			if ($timeout_value > 60 || $timeout_value < 1) throw new Exception\SDKException('Invalid timeout value, please pick a value between 0-60.');
			self::$timeout = $timeout_value;
		}
		static function setEndpointKey($value) { self::$endpoint_key = $value; }
		static function setSubdomain($value) { self::$subdomain = $value; }

		static function runCall($type, $path, $data = false, $params = false, $return_type = 'json') {
			if (!self::$password) throw new Exception\SDKException('Please set api key and pin with setAuthentication before attempting other calls.');
			$body = $data ? json_encode($data) : '[]';
			if ($params && count($params) > 0) {
				$first = true;
				foreach ($params as $name => $value) {
					$path .= ($first ? '?' : '&') . $name . '=' . $value;
					$first = false;
				}
			}
			$url = 'https://' . self::$subdomain . '.usaepay.com/api/' . self::$endpoint_key . $path;
			$curl = curl_init($url);
			curl_setopt($curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
			curl_setopt($curl, CURLOPT_USERPWD, self::$password);
			curl_setopt($curl, CURLOPT_RETURNTRANSFER, true);
			curl_setopt($curl, CURLOPT_HTTPHEADER, ['Content-type: application/json']);
			curl_setopt($curl, CURLOPT_TIMEOUT, (int) self::$timeout);
			if ($type === 'post') {
				curl_setopt($curl, CURLOPT_POST, true);
				curl_setopt($curl, CURLOPT_POSTFIELDS, $body);
			} elseif ($type === 'get') {
				curl_setopt($curl, CURLOPT_POST, false);
			} elseif ($type === 'delete' || $type === 'put') {
				curl_setopt($curl, CURLOPT_POST, true);
				curl_setopt($curl, CURLOPT_CUSTOMREQUEST, strtoupper($type));
				curl_setopt($curl, CURLOPT_POSTFIELDS, $body);
			} else {
				throw new Exception\SDKException('Unexpected Call Type');
			}
			$raw = curl_exec($curl);
			if (!$raw) throw new Exception\CurlException(curl_error($curl));
			$response = json_decode($raw);
			if (is_object($response) && property_exists($response, 'error') && (!property_exists($response, 'result') || $response->result == 'error')) {
				throw new Exception\ueException($response->error, $response->errorcode);
			}
			return $response;
		}
	}

	class Transactions {
		static function post($Data = array()) {
			return API::runCall('post', '/transactions', $Data, []);
		}
	}

	class Customers {
		static function get($Data = array()) {
			$Path = '/customers';
			$Params = [];
			if (array_key_exists('limit', $Data)) $Params['limit'] = $Data['limit'];
			if (array_key_exists('offset', $Data)) $Params['offset'] = $Data['offset'];
			if (array_key_exists('custkey', $Data)) {
				$Path .= '/' . $Data['custkey'];
				unset($Data['custkey']);
			}
			return API::runCall('get', $Path, $Data, $Params);
		}
		static function post($Data = array()) {
			return API::runCall('post', '/customers', $Data, []);
		}
		static function delete($Data = array()) {
			if (!array_key_exists('custkey', $Data)) throw new Exception\SDKException('Customers delete requires custkey');
			$Path = '/customers/' . $Data['custkey'];
			unset($Data['custkey']);
			return API::runCall('delete', $Path, $Data, []);
		}
		static function put($Data = array()) {
			if (!array_key_exists('custkey', $Data)) throw new Exception\SDKException('Customers put requires custkey');
			$Path = '/customers/' . $Data['custkey'];
			unset($Data['custkey']);
			return API::runCall('put', $Path, $Data, []);
		}
	}
}

namespace USAePay\Customers {
	use USAePay\API;

	class Payment_methods {
		static function get($Data = array()) {
			if (!array_key_exists('custkey', $Data)) throw new \USAePay\Exception\SDKException('Payment_methods get requires custkey');
			$Path = '/customers/' . $Data['custkey'] . '/payment_methods';
			unset($Data['custkey']);
			if (array_key_exists('paymethod_key', $Data)) {
				$Path .= '/' . $Data['paymethod_key'];
				unset($Data['paymethod_key']);
			}
			return API::runCall('get', $Path, $Data, []);
		}
		static function post($Data = array()) {
			if (!array_key_exists('custkey', $Data)) throw new \USAePay\Exception\SDKException('Payment_methods post requires custkey');
			$Path = '/customers/' . $Data['custkey'] . '/payment_methods';
			unset($Data['custkey']);
			return API::runCall('post', $Path, $Data, []);
		}
		static function delete($Data = array()) {
			return API::runCall('delete', self::methodPath($Data, 'delete'), $Data, []);
		}
		static function put($Data = array()) {
			return API::runCall('put', self::methodPath($Data, 'put'), $Data, []);
		}
		private static function methodPath(&$Data, $verb) {
			if (!array_key_exists('custkey', $Data) || !array_key_exists('paymethod_key', $Data)) throw new \USAePay\Exception\SDKException("Payment_methods $verb requires custkey and paymethod_key");
			$Path = '/customers/' . $Data['custkey'] . '/payment_methods/' . $Data['paymethod_key'];
			unset($Data['custkey'], $Data['paymethod_key']);
			return $Path;
		}
	}
}
